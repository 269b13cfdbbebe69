package main

import "time"

// main owns the signals through internal/sigctx: every command runs under
// one context that the first SIGINT, SIGTERM or SIGHUP cancels. Which
// commands are abandoned or stop gracefully is the CLI's knowledge, so the
// lists stay here.

// abandonOnSignal lists the commands with nothing to undo: after a signal
// they get abandonGrace to return by themselves, and then the process exits
// anyway, since they may be blocked where no context reaches (opening a
// FIFO, a hung NFS read). Every other command is waited for: it cancels
// jobs, releases locks and records what happened.
var abandonOnSignal = map[string]bool{
	"render": true, "logs": true, "ping": true, "status": true, "cancel": true, "nodes": true,
	"mock-answer-key": true, "results": true, "help": true, "h": true,
}

const abandonGrace = time.Second

// gracefulStop lists the commands a signal stops normally: a server's
// SIGTERM is its shutdown, and it exits 0 when it shut down cleanly.
var gracefulStop = map[string]bool{"mock-engine": true, "mock-dcgm-exporter": true}
