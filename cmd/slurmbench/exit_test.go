package main

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestExitCodesHelpMatchesTable: run's and attach's --help list every exit
// code a run can end with, and only codes of the table.
func TestExitCodesHelpMatchesTable(t *testing.T) {
	listed := map[exitcode.Code]bool{}
	for _, m := range regexp.MustCompile(`(?:^|[:;] ?\n?)\s*(\d+) `).FindAllStringSubmatch(exitCodesHelp, -1) {
		n, _ := strconv.Atoi(m[1])
		listed[exitcode.Code(n)] = true
	}
	// Not a run's outcome: a bug prints no layer, and 11 is the operator
	// commands' (slurm ping, jobs, ...).
	notRun := map[exitcode.Code]bool{exitcode.Internal: true, exitcode.Slurm: true}
	for _, e := range exitcode.Table {
		if !notRun[e.Code] && !listed[e.Code] {
			t.Errorf("run --help does not list exit code %d (%s)", e.Code, e.Layer)
		}
		delete(listed, e.Code)
	}
	for c := range listed {
		t.Errorf("run --help lists exit code %d, which the table does not have", c)
	}
}
