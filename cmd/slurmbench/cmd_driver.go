package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/launcher/job/driver"
	"github.com/slurmbench/slurmbench/launcher/job/nodeaddr"
)

func driverCommand() *cli.Command {
	return &cli.Command{
		Name:      "driver",
		Usage:     "drive a planned run inside its allocation (run by the batch script)",
		UsageText: "slurmbench driver --plan RUN_DIR/plan.json",
		Description: `Runs on the first node of the allocation. Starts every process of the plan as
its own srun step (infra, workers, frontend), waits for the health gate while
watching every step, runs the benchmark and eval steps, and writes
status.json and outcome.json in the run directory. Any step that exits early
ends the run at once, diagnosed from its log. The job's exit code is the
failing layer's (6 health, 7 engine, 8 benchmark, 9 eval).

It reads SLURM_JOB_ID and SLURM_JOB_NODELIST from the environment Slurm gives
the batch script.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "plan", Required: true, Usage: "the run's plan.json (absolute path)"},
			&cli.StringFlag{Name: "srun", Value: "srun", Usage: "srun program"},
		},
		Action: func(c *cli.Context) error {
			return driver.Command(c.Context, driver.Options{PlanFile: c.String("plan"), Srun: c.String("srun"), Log: c.App.ErrWriter,
				ProducerVersion: version, ProducerCommit: commit})
		},
	}
}

func execCommand() *cli.Command {
	return &cli.Command{
		Name:      "exec",
		Usage:     "set a step's environment and exec its program (the first command of every srun step)",
		UsageText: "slurmbench exec RUN_DIR/steps/NAME.json",
		Description: `Reads a step spec written by the driver (argv, environment, working
directory), sets the environment over what the container runtime provides,
and replaces itself with the program: no shell, no string parsing.`,
		Action: func(c *cli.Context) error { return driver.ExecCommand(c.Args().Slice()) },
	}
}

func nodeAddrCommand() *cli.Command {
	return &cli.Command{
		Name:      "node-addr",
		Hidden:    true,
		Usage:     "print this node's address on the cluster's network interface (run by the driver on every node)",
		UsageText: "slurmbench node-addr --interface LIST",
		Description: `Prints one line: the node's Slurm name and its address by srtctl's rule
(get_node_ip.sh@8386b8d4): the IPv4 of the first interface of LIST that has
one, else the source address of the route to 8.8.8.8, else hostname -I's.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "interface", Required: true, Usage: "comma-separated interface names, tried in order"}},
		Action: func(c *cli.Context) error {
			return nodeaddr.Command(c.App.Writer, c.String("interface"), nil)
		},
	}
}
