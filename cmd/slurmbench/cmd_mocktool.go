package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/mockengine/standin"
)

// mockToolCommand runs the mock engine under a real serving tool's name
// and command line (the mock image's trtllm-serve, trtllm-llmapi-launch,
// vllm and vllm-router scripts call it).
func mockToolCommand() *cli.Command {
	return &cli.Command{
		Name:            "mock-tool",
		Usage:           "run the mock engine as trtllm-serve, trtllm-llmapi-launch, vllm or vllm-router (test images)",
		UsageText:       "slurmbench mock-tool TOOL [the tool's own arguments]",
		SkipFlagParsing: true,
		Description: `Stands in for a serving tool with that tool's flags, refusing any flag it
does not know. Latency and the gsm8k answer key come from SLURMBENCH_MOCK_TTFT,
SLURMBENCH_MOCK_ITL and SLURMBENCH_MOCK_ANSWER_KEY.`,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) == 0 {
				return cli.ShowSubcommandHelp(c)
			}
			return standin.Run(c.Context, standin.Options{Tool: args[0], Args: args[1:], Log: c.App.ErrWriter})
		},
	}
}
