package submit_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/enroot/enroottest"
	"github.com/slurmbench/slurmbench/internal/clustertest"
	"github.com/slurmbench/slurmbench/launcher/login/submit"
	"github.com/slurmbench/slurmbench/slurm"
)

// TestClusterImportOnComputeNode: with import_on = compute (GB300's case),
// enroot import runs as a one-node job, and the squash lands atomically in
// the shared squash dir, valid.
func TestClusterImportOnComputeNode(t *testing.T) {
	env := clustertest.Setup(t)
	client, err := slurm.New(slurm.Config{URL: env.Cluster.RestURL, User: env.Cluster.User, Token: env.Cluster.Token})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(env.Root, "import-test", time.Now().Format("150405.000000"))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	callLog := filepath.Join(dir, "calls.jsonl")
	r := submit.SlurmRunner{Client: client, Partition: env.Cluster.Partition, TimeLimit: 5 * time.Minute,
		WorkDir: filepath.Join(dir, ".imports"),
		Env:     clustertest.JobEnv("ENROOT_STANDIN_LOG=" + callLog), Owner: env.Owner}
	imp, err := enroot.NewImporter(enroot.Options{SquashDir: dir, Enroot: env.Enroot, Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := enroot.ParseRef("nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.9.0")
	before, _ := client.ListJobs(context.Background(), slurm.JobFilter{Name: "slurmbench-import"})
	res, err := imp.Import(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != enroot.ActionImported {
		t.Errorf("action %s, want imported", res.Action)
	}
	if _, err := enroot.ValidateSquash(res.Path); err != nil {
		t.Errorf("squash: %v", err)
	}
	// Other tests import through jobs of the same name at the same time:
	// count the new ones that ran in this test's directory.
	after, _ := client.ListJobs(context.Background(), slurm.JobFilter{Name: "slurmbench-import"})
	seen := map[slurm.JobID]bool{}
	for _, j := range before {
		seen[j.ID] = true
	}
	mine := 0
	for _, j := range after {
		if !seen[j.ID] && (strings.HasPrefix(j.WorkDir, dir) || strings.HasPrefix(j.StdOut, dir)) {
			mine++
		}
	}
	if mine != 1 {
		t.Errorf("%d new import jobs ran in %s, want exactly one", mine, dir)
	}
	calls, err := enroottest.ReadCalls(callLog)
	if err != nil {
		t.Fatal(err)
	}
	if n := enroottest.Count(calls, "import"); n != 1 {
		t.Errorf("%d enroot import calls, want 1", n)
	}
}
