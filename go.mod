module github.com/fixrail/fixrail

go 1.26.0

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4
	github.com/google/go-cmp v0.7.0
	github.com/rogpeppe/go-internal v1.16.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/crypto v0.59.0
	mvdan.cc/sh/v3 v3.14.1
)

require (
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/tools v0.38.0 // indirect
)
