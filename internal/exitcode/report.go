package exitcode

import (
	"fmt"
	"io"
	"strings"
)

// Report prints err as the command line ends with it and returns its exit
// code: one problem per line, so several found at once (joined errors,
// failed preflight checks) are a list, not one long line. An empty message
// (the command already said why) prints nothing.
func Report(w io.Writer, err error) Code {
	if msg := strings.TrimSpace(err.Error()); msg != "" {
		lines := strings.Split(msg, "\n")
		fmt.Fprintf(w, "slurmbench: %s\n", lines[0])
		for _, l := range lines[1:] {
			if l = strings.TrimSpace(l); l != "" {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
	}
	return Of(err)
}
