package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// TODO(owner of cmd_slurm.go): replace this placeholder.
func pingCommand() *cli.Command {
	return &cli.Command{Name: "ping", Hidden: true, Action: func(*cli.Context) error { return errors.New("ping: not implemented yet") }}
}

// TODO(owner of cmd_slurm.go): replace this placeholder.
func statusCommand() *cli.Command {
	return &cli.Command{Name: "status", Hidden: true, Action: func(*cli.Context) error { return errors.New("status: not implemented yet") }}
}

// TODO(owner of cmd_slurm.go): replace this placeholder.
func cancelCommand() *cli.Command {
	return &cli.Command{Name: "cancel", Hidden: true, Action: func(*cli.Context) error { return errors.New("cancel: not implemented yet") }}
}

// TODO(owner of cmd_slurm.go): replace this placeholder.
func nodesCommand() *cli.Command {
	return &cli.Command{Name: "nodes", Hidden: true, Action: func(*cli.Context) error { return errors.New("nodes: not implemented yet") }}
}
