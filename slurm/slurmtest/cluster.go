package slurmtest

import (
	"os"
	"testing"
)

// ClusterEnv is the real cluster an integration test runs against.
type ClusterEnv struct {
	RestURL   string // SLURM_REST_URL
	Token     string // SLURM_JWT
	User      string // SLURM_USER
	Partition string // SLURM_PARTITION
}

// Cluster reads the cluster from SLURM_REST_URL, SLURM_JWT, SLURM_USER and
// SLURM_PARTITION (exported by testcluster/up.sh into its env file). When
// any is unset the test is skipped, or fails when SLURMBENCH_REQUIRE_CLUSTER=1
// (CI), so a missing cluster cannot pass silently there.
func Cluster(t testing.TB) ClusterEnv {
	t.Helper()
	env := ClusterEnv{
		RestURL:   os.Getenv("SLURM_REST_URL"),
		Token:     os.Getenv("SLURM_JWT"),
		User:      os.Getenv("SLURM_USER"),
		Partition: os.Getenv("SLURM_PARTITION"),
	}
	var missing []string
	for _, v := range [][2]string{{"SLURM_REST_URL", env.RestURL}, {"SLURM_JWT", env.Token}, {"SLURM_USER", env.User}, {"SLURM_PARTITION", env.Partition}} {
		if v[1] == "" {
			missing = append(missing, v[0])
		}
	}
	if len(missing) > 0 {
		unavailable(t, "no Slurm test cluster: %v unset (start one with testcluster/up.sh and source its env file)", missing)
	}
	return env
}

// SharedDir is a directory at the same path on the test host and on the
// cluster's nodes, writable by the job user, for job working directories
// and output (SLURMBENCH_SHARED_DIR). Skipped or fatal like Cluster.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("SLURMBENCH_SHARED_DIR")
	if dir == "" {
		unavailable(t, "SLURMBENCH_SHARED_DIR unset: jobs need a directory shared between this host and the nodes")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		unavailable(t, "SLURMBENCH_SHARED_DIR=%s is not a directory on this host", dir)
	}
	return dir
}

func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("SLURMBENCH_REQUIRE_CLUSTER") == "1" {
		t.Fatalf(format+" (SLURMBENCH_REQUIRE_CLUSTER=1)", args...)
		return
	}
	t.Skipf(format, args...)
}
