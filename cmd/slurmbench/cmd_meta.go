package main

import (
	"fmt"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/buildinfo"
	"github.com/slurmbench/slurmbench/internal/completion"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print slurmbench's version and commit (as --version does)",
		UsageText: "slurmbench version [--json]",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print version, commit, Go version and platform as JSON"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return configErrorf("version takes no arguments, got %q", c.Args().First())
			}
			if c.Bool("json") {
				v, cm := buildinfo.Resolve(version, commit, buildinfo.Read)
				return launch.WriteJSON(c.App.Writer, map[string]string{"version": v, "commit": cm,
					"go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH})
			}
			_, err := fmt.Fprintf(c.App.Writer, "slurmbench %s\n", c.App.Version)
			return err
		},
	}
}

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh or fish",
		UsageText: "slurmbench completion bash|zsh|fish",
		Description: `Prints a completion script for commands, subcommands and flags. Install it:

  bash:  slurmbench completion bash > ~/.local/share/bash-completion/completions/slurmbench
  zsh:   slurmbench completion zsh > "${fpath[1]}/_slurmbench"
  fish:  slurmbench completion fish > ~/.config/fish/completions/slurmbench.fish

Examples:
  slurmbench completion bash | head -3`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return configErrorf("completion: give one shell: bash, zsh or fish")
			}
			if err := completion.Write(c.App.Writer, c.Args().First(), "slurmbench", completionTree(c.App.Commands)); err != nil {
				return configErrorf("completion: %v", err)
			}
			return nil
		},
	}
}

// completionTree is the visible command tree, for the scripts.
func completionTree(cmds []*cli.Command) []completion.Command {
	var out []completion.Command
	for _, c := range cmds {
		if c.Hidden || c.Name == "help" {
			continue
		}
		cc := completion.Command{Name: c.Name, Usage: c.Usage, Subs: completionTree(c.Subcommands)}
		for _, f := range c.Flags {
			df, _ := f.(cli.DocGenerationFlag)
			for _, n := range f.Names() {
				cf := completion.Flag{Name: n}
				if df != nil {
					cf.Usage, cf.Value = df.GetUsage(), df.TakesValue()
				}
				cc.Flags = append(cc.Flags, cf)
			}
		}
		out = append(out, cc)
	}
	return out
}
