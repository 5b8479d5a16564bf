module github.com/skiff-dev/skiff

go 1.26

require (
	github.com/evanphx/json-patch/v5 v5.9.11
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.2 // indirect
