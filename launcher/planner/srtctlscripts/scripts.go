// Package srtctlscripts holds scripts of NVIDIA srt-slurm's srtctl that
// slurmbench runs as srtctl does, verbatim: srtctl's runtime_scripts at
// commit c88ef731, under the Apache License 2.0 (LICENSE here, and each
// script's SPDX header).
package srtctlscripts

import _ "embed"

// StageModel is runtime_scripts/stage_model.sh: it copies a model
// directory to node-local storage once per node before the workers start,
// skipping the copy when a name-and-size manifest already matches, and
// fails when the copy does not verify. Usage: stage_model.sh SOURCE DEST.
//
//go:embed stage_model.sh
var StageModel string
