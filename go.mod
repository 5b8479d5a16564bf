module github.com/skiff-dev/skiff

go 1.26

require sigs.k8s.io/json v0.0.0-20260909141634-11ed52e25bc5 // indirect
