package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// TODO(owner of cmd_images.go): replace this placeholder.
func imagesCommand() *cli.Command {
	return &cli.Command{Name: "images", Hidden: true, Action: func(*cli.Context) error { return errors.New("images: not implemented yet") }}
}
