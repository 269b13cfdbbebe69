package layout

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every file in the repository is written here: another project's code or
// prose does not come in (facts do: an argv, a field name, a recorded
// output). A licence or copyright header is the mark such a file carries,
// so any in a tracked file fails, outside the places that hold what is
// not code.
//
// exemptTrees are folders whose files may carry another project's licence.
var exemptTrees = []string{
	// The GSM8K data set compiled into the binary: data, with its MIT
	// licence beside it.
	"internal/gsm8kdata/",
}

// The header lines of other projects' files: an SPDX tag, a copyright
// line, the Apache and MIT licence texts. Each matches at the start of a
// line after an optional comment marker, so prose that names them in
// passing (as this comment does) is not a header. The words are split so
// this file does not match itself.
var foreignHeader = func() []*regexp.Regexp {
	lead := `^\s*(?:#|//|/\*|\*|--|;|<!--|rem\s|"""|'''|)\s*`
	var out []*regexp.Regexp
	for _, p := range []string{
		"SPDX" + `-(?:FileCopyrightText|License-Identifier|FileContributor)\s*:`,
		"Copy" + `right\s*(?:\([cC]\)|©|\d{4})`,
		"Copy" + `right\s+(?:[Tt]he\s+)?[\w.&-]+(?:\s+[\w.&-]+)*\s+(?:Authors|[Cc]ontributors|Corporation|CORPORATION|Inc\.?|LLC|Ltd\.?)\b`,
		"Licensed under the " + `Apache License`,
		"Apache " + `License\s*(?:,\s*)?(?:Version 2\.0)?\s*$`,
		"Permission is hereby granted, " + `free of charge`,
		"All rights " + `reserved\.?\s*$`,
	} {
		out = append(out, regexp.MustCompile(lead+p))
	}
	return out
}()

// maxScan bounds how much of one file is read.
const maxScan = 4 << 20

// foreignHeaders lists "path:line: text" for each header line in r.
func foreignHeaders(path string, r io.Reader) []string {
	b, _ := io.ReadAll(io.LimitReader(r, maxScan))
	if bytes.IndexByte(b, 0) >= 0 {
		return nil // binary (compressed data, images)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), maxScan)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		for _, re := range foreignHeader {
			if re.MatchString(line) {
				out = append(out, path+":"+strconv.Itoa(n)+": "+strings.TrimSpace(line))
				break
			}
		}
	}
	return out
}

// gitIn is git run on the repository at root, whatever git's variables
// the test inherits: under `git rebase --exec` GIT_DIR names the
// repository being rebased, and `git init` in a temporary root would then
// re-initialize that one (turning it bare) and `git add -A` fill its index.
func gitIn(root string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd
}

// trackedFiles is `git ls-files` in root, or every file under it (dot
// directories left out) where git cannot say.
func trackedFiles(t *testing.T, root string) []string {
	t.Helper()
	if out, err := gitIn(root, "ls-files", "-z").Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// scanRepository is every foreign header in root's tracked files outside
// the exempt trees.
func scanRepository(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, rel := range trackedFiles(t, root) {
		exempt := false
		for _, tree := range exemptTrees {
			exempt = exempt || strings.HasPrefix(rel, tree)
		}
		if exempt {
			continue
		}
		f, err := os.Open(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			continue // listed by git, deleted in the work tree
		}
		out = append(out, foreignHeaders(rel, f)...)
		f.Close()
	}
	return out
}

// TestNoForeignHeaders: no tracked file carries another project's licence
// or copyright header.
func TestNoForeignHeaders(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range scanRepository(t, root) {
		t.Errorf("%s: another project's header; write the file here instead (facts may carry over, text may not)", h)
	}
}

// TestForeignHeadersPlanted: the scan reports a header planted in a
// repository, in each comment style, and leaves prose that names them,
// the exempt trees and binary files alone.
func TestForeignHeadersPlanted(t *testing.T) {
	spdx := "SPDX" + "-FileCopyrightText: Copy" + "right (c) 2025 NVIDIA CORPORATION & AFFILIATES. All rights reserved."
	files := map[string]string{
		"a/bench.sh":                 "#!/bin/bash\n# " + spdx + "\n# SPDX" + "-License-Identifier: Apache-2.0\nset -e\n",
		"a/rollup.py":                "#!/usr/bin/env python3\n\"\"\"Tool.\"\"\"\nimport json\n# Copy" + "right (c) 2024 Someone Else\n",
		"b/lib.go":                   "// Copy" + "right 2023 The Go Authors\npackage b\n",
		"b/other.go":                 "package b\n\n// Copy" + "right The Go Authors. All rights reserved.\n",
		"b/nv.sh":                    "#!/bin/sh\n# Copy" + "right NVIDIA CORPORATION & AFFILIATES\n",
		"b/vendored.c":               "/*\n * Licensed under the " + "Apache License, Version 2.0 (the \"License\");\n */\n",
		"c/LICENSE":                  "\n                                 Apache " + "License\n                           Version 2.0, January 2004\n",
		"c/MIT.txt":                  "MIT License\n\nPermission is hereby granted, " + "free of charge, to any person\n",
		"docs/rule.md":               "A test fails on an `SPDX" + "-FileCopyrightText` header or a \"Copy" + "right (c)\" line in passing prose.\n",
		"ok/main.go":                 "// Package ok is ours.\npackage ok\n",
		"internal/gsm8kdata/LICENSE": "MIT License\n\nCopy" + "right (c) 2021 OpenAI\n",
		"third_party/x/y.c":          "// " + spdx + "\n", // no folder is exempt but the data set's
		"bin/data.gz":                "\x1f\x8b\x00" + spdx,
	}
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := exec.LookPath("git"); err == nil {
		// Through git ls-files, as the real scan: the planted files are
		// tracked.
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
			if out, err := gitIn(root, args...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	got := scanRepository(t, root)
	want := []string{
		"a/bench.sh:2", "a/bench.sh:3", "a/rollup.py:4", "b/lib.go:1", "b/nv.sh:2", "b/other.go:3", "b/vendored.c:2", "c/LICENSE:2", "c/MIT.txt:3",
		"third_party/x/y.c:1",
	}
	var at []string
	for _, g := range got {
		parts := strings.SplitN(g, ":", 3)
		at = append(at, parts[0]+":"+parts[1])
	}
	if slices.Sort(at); strings.Join(at, " ") != strings.Join(want, " ") {
		t.Errorf("reported\n %q\nwant headers at\n %q", got, want)
	}
}
