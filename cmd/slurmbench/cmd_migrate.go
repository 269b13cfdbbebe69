package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/cliargs"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

func migrateCommand() *cli.Command {
	return &cli.Command{
		Name:      "migrate",
		Usage:     "rewrite schema-1 recipes into schema 2 (srt-slurm 2.x), keeping comments and key order",
		UsageText: "slurmbench migrate -f FILE|DIR [--in-place] [--verify [-p PROFILE]] [--set KEY=VALUE] [--unset KEY]",
		Description: `Rewrites a recipe in srt-slurm c88ef731's layout (schema 1: backend:,
resources.<role>_nodes, infra:, dynamo.version/hash/wheel, ...) into srt-slurm
2.x's schema 2 (engine:, roles:, placement:, services:, dynamo.source), rule by
rule as srt-slurm's own migrator does; an override file (base: +
override_*/zip_override_*) is rewritten section by section. Comments and key
order are kept (the YAML is re-indented by two spaces). What moved, and what
was deliberately left as it was, is listed on stderr.

-f FILE prints the migrated recipe on stdout and changes nothing; a file that
is already schema 2 is printed as it is. With --in-place the file is replaced
atomically (a complete new file or the old one, never half of one), keeping
its mode; a file already schema 2 is refused (exit 2).

-f DIR walks every *.yaml and *.yml below it. Without --in-place nothing is
written: one status line per file (migrate, already schema 2, or the error).
With --in-place every schema-1 file is migrated (and verified, with --verify)
in memory first, and the files are written only if all of them succeeded;
schema-2 files are left as they are.

--verify proves each migration: every config of the file is planned from the
original and from the migrated document, and the plans must be equal but for
the recipe's spelling (exit 1 on a difference, nothing written). The plans use
-p PROFILE, or without it a profile made up per recipe (its gpus_per_node,
every model and container alias mapped).

--set and --unset (a FILE only) edit the original before it is migrated, as
for render.

Examples (from the repository's root):
  slurmbench migrate -f examples/mock-2p1d.yaml
  slurmbench migrate -f examples/mock-2p1d.yaml --verify -p profiles/testcluster.toml
  slurmbench migrate -f examples --verify
  slurmbench migrate -f examples/mock-2p1d.yaml --set health_check.max_attempts=120
  cp examples/mock-2p1d.yaml /tmp/r.yaml && slurmbench migrate -f /tmp/r.yaml --in-place --verify`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "the recipe `FILE`, or a `DIR` of recipes", Required: true},
			&cli.BoolFlag{Name: "in-place", Usage: "replace the file(s) with the migration (atomically; a schema-2 FILE is refused)"},
			&cli.BoolFlag{Name: "verify", Usage: "plan the original and the migration and require equal plans"},
			&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Usage: "cluster profile the --verify plans use (default: one made up per recipe)"},
			&cli.StringFlag{Name: "workspace", Usage: "the InferenceX checkout the --verify plans name (custom benchmarks run from it)", EnvVars: []string{"SLURMBENCH_WORKSPACE", "GITHUB_WORKSPACE"}},
			&cli.BoolFlag{Name: "allow-duplicate-keys", Usage: "accept a recipe that sets a key twice, keeping the last as srtctl does"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "do not list what moved"},
		}, overrideFlags()...),
		OnUsageError: cliargs.UsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return configErrorf("migrate takes no arguments, got %q (did you mean -f?)", c.Args().First())
			}
			return launch.Migrate(c.Context, launch.MigrateOptions{IO: ioOf(c), File: c.String("file"),
				InPlace: c.Bool("in-place"), Verify: c.Bool("verify"), Quiet: c.Bool("quiet"),
				AllowDuplicateKeys: c.Bool("allow-duplicate-keys"), Profile: c.String("profile"),
				Workspace: c.String("workspace"), Overrides: overridesOf(c)})
		},
	}
}
