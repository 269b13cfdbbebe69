package main

import "github.com/urfave/cli/v2"

// commands lists every subcommand; each lives in its own cmd_*.go file.
func commands() []*cli.Command {
	return []*cli.Command{
		renderCommand(),
		migrateCommand(),
		doctorCommand(),
		runsCommand(),
		runCommand(),
		upCommand(),
		downCommand(),
		matrixCommand(),
		generateCommand(),
		attachCommand(),
		logsCommand(),
		pingCommand(),
		statusCommand(),
		cancelCommand(),
		cleanupCommand(),
		nodesCommand(),
		imagesCommand(),
		mockEngineCommand(),
		mockDCGMCommand(),
		mockToolCommand(),
		mockAnswerKeyCommand(),
		resultsCommand(),
		reportCommand(),
		driverCommand(),
		execCommand(),
		nodeAddrCommand(),
		benchCommand(),
		evalCommand(),
		dynamoInstallCommand(),
		srtctlBenchCommand(),
		stageModelCommand(),
		importNodeCommand(),
		versionCommand(),
		completionCommand(),
	}
}
