// Package deps pins the project's direct dependencies while packages that use
// them are being written in parallel; delete it once each is imported for real.
package deps

import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/hashicorp/go-retryablehttp"
	_ "github.com/urfave/cli/v2"
	_ "go.yaml.in/yaml/v3"
)
