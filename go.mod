module github.com/skiff-dev/skiff

go 1.26
