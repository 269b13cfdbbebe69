module github.com/slurmbench/slurmbench

go 1.25

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/urfave/cli/v2 v2.27.7
	go.yaml.in/yaml/v3 v3.0.6
	mvdan.cc/sh/v3 v3.12.0
)

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
)
