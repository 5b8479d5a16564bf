module github.com/skiff-dev/skiff

go 1.26

require github.com/evanphx/json-patch/v5 v5.9.11
