package preflight

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/slurm"
)

// requestTimeout bounds one slurmrestd request of a preflight: a black-holed
// rest_url fails in seconds, not the client's default half minute.
const requestTimeout = 10 * time.Second

// slurmChecks checks the connection, API version, token, partition, nodes
// and account. It reports whether the cluster side passed (the probe needs
// it).
func (r *run) slurmChecks(ctx context.Context) bool {
	p := r.p
	where := "slurm.rest_url in " + p.Path
	dependents := []string{"api-version", "token", "partition", "nodes", "account"}
	skipRest := func(from int, why string) bool {
		for _, n := range dependents[from:] {
			r.skip(n, why)
		}
		return false
	}

	t, err := p.SlurmTransport()
	if err != nil {
		r.fail("transport", layerConfig, errText(err), "set slurm.rest_url, or slurm.bin_dir to where sbatch is, in "+p.Path)
	} else {
		r.pass("transport", "%s (%s)", t.Name, t.Why)
	}
	if t.Name == profile.TransportCLI && r.o.Client == nil {
		return r.commandChecks(ctx, skipRest)
	}
	client := r.o.Client
	if client == nil {
		var err error
		client, err = p.SlurmClient(func(cfg *slurm.Config) {
			cfg.Retry.Max = -1 // one attempt: preflight reports, it does not wait
			cfg.RequestTimeout = requestTimeout
		})
		if err != nil {
			r.fail("slurmrestd", layerConfig, errText(err), tokenFix(p))
			return skipRest(0, "no slurmrestd client")
		}
	}
	r.client = client

	srv, err := client.Negotiate(ctx)
	switch {
	case err == nil:
		r.pass("slurmrestd", "%s answers: Slurm %s", srv.URL, orUnknown(srv.SlurmRelease))
	case slurm.IsTokenError(err):
		// Negotiation sends a token, so a failing token command shows here.
		r.skip("slurmrestd", fmt.Sprintf("%s not contacted: no token yet", p.Slurm.RestURL))
		r.skip("api-version", "no token")
		r.fail("token", layerConfig, errText(err), tokenFix(p))
		return skipRest(2, "no token")
	case slurm.IsAuth(err):
		r.pass("slurmrestd", "%s answers", p.Slurm.RestURL)
		r.skip("api-version", "the token was refused")
		r.fail("token", layerConfig, "slurmrestd refused the token: "+errText(err), tokenFix(p))
		return skipRest(2, "the token was refused")
	default:
		var apiErr *slurm.APIError
		if errors.As(err, &apiErr) {
			// It answered, but with an error for every API version.
			r.fail("slurmrestd", layerSlurm, errText(err), "check that "+p.Slurm.RestURL+" is slurmrestd ("+where+")")
		} else {
			r.fail("slurmrestd", layerSlurm, "cannot reach "+p.Slurm.RestURL+": "+errText(err),
				"check "+where+" and that slurmrestd runs there (slurmbench ping --profile "+p.Path+")")
		}
		return skipRest(0, "slurmrestd not reachable")
	}

	// A pinned version is not probed by negotiation: the first request
	// tells whether the server serves it.
	parts, err := client.ListPartitions(ctx)
	switch {
	case err == nil:
	case slurm.IsUnsupported(err) && p.Slurm.APIVersion != "":
		r.fail("api-version", layerConfig, fmt.Sprintf("slurmrestd does not serve the pinned API %s", p.Slurm.APIVersion),
			"remove slurm.api_version from "+p.Path+" (the newest served is chosen) or pin one of "+strings.Join(slurm.SupportedVersions, ", "))
		return skipRest(1, "the API version is not served")
	case slurm.IsTokenError(err):
		r.apiVersion(srv)
		r.fail("token", layerConfig, errText(err), tokenFix(p))
		return skipRest(2, "no token")
	case slurm.IsAuth(err):
		r.apiVersion(srv)
		r.fail("token", layerConfig, "slurmrestd refused the token: "+errText(err), tokenFix(p))
		return skipRest(2, "the token was refused")
	default:
		r.apiVersion(srv)
		r.pass("token", "accepted (%s)", tokenSource(p))
		r.fail("partition", layerSlurm, errText(err), "check slurmctld (slurmbench ping --profile "+p.Path+")")
		return skipRest(3, "partitions could not be listed")
	}
	r.apiVersion(client.Server())
	r.pass("token", "accepted (%s)", tokenSource(p))

	part, ok := r.partition(parts)
	if !ok {
		return skipRest(3, "no usable partition")
	}
	nodes, err := client.ListNodes(ctx)
	if err != nil {
		r.fail("nodes", layerSlurm, errText(err), "check slurmctld (slurmbench nodes --profile "+p.Path+")")
		r.account(part)
		return false
	}
	okNodes := r.nodes(part, nodes)
	okAccount := r.account(part)
	return okNodes && okAccount
}

func (r *run) apiVersion(srv slurm.ServerInfo) {
	if r.p.Slurm.APIVersion != "" {
		r.pass("api-version", "%s (pinned by slurm.api_version)", srv.APIVersion)
		return
	}
	r.pass("api-version", "%s (the newest of %s the server serves)", srv.APIVersion, strings.Join(slurm.SupportedVersions, ", "))
}

func (r *run) partition(parts []slurm.Partition) (slurm.Partition, bool) {
	p := r.p
	want := p.Slurm.Partition
	if r.o.Plan != nil {
		want = r.o.Plan.Slurm.Partition
	}
	var names []string
	for _, part := range parts {
		names = append(names, part.Name)
		if part.Name != want {
			continue
		}
		if len(part.State) > 0 && !slices.Contains(part.State, "UP") {
			r.fail("partition", layerSlurm, fmt.Sprintf("%s is %s, jobs would not start", want, strings.Join(part.State, "+")),
				"ask the cluster's admins, or set slurm.partition in "+p.Path+" to another partition")
			return part, false
		}
		if limit := r.timeLimit(); part.MaxTime > 0 && limit > part.MaxTime {
			r.fail("partition", layerConfig, fmt.Sprintf("%s allows jobs of at most %s; the run asks for %s", want, part.MaxTime, limit),
				"lower slurm.time_limit in "+p.Path)
			return part, false
		}
		r.pass("partition", "%s is UP (%d nodes, max time %s)", want, part.TotalNodes, maxTime(part.MaxTime))
		return part, true
	}
	slices.Sort(names)
	r.fail("partition", layerConfig, fmt.Sprintf("%q is not a partition of this cluster (it has: %s)", want, strings.Join(names, ", ")),
		"set slurm.partition in "+p.Path+" to one of them")
	return slurm.Partition{}, false
}

func (r *run) timeLimit() time.Duration {
	if r.o.Plan != nil {
		return time.Duration(r.o.Plan.Slurm.TimeLimitMinutes) * time.Minute
	}
	if m, err := profile.ParseTimeLimit(r.p.Slurm.TimeLimit); err == nil && r.p.Slurm.TimeLimit != "" {
		return time.Duration(m) * time.Minute
	}
	return 0
}

func maxTime(d time.Duration) string {
	if d == 0 {
		return "unlimited"
	}
	return d.String()
}

// unusable node state flags: a node with one of them takes no new job.
var unusable = []string{"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING", "NOT_RESPONDING", "FUTURE",
	"INVALID", "INVALID_REG", "UNKNOWN", "POWERED_DOWN", "POWERING_DOWN", "POWER_DOWN", "MAINTENANCE", "REBOOT_ISSUED"}

// nodes checks that the partition has enough nodes with the profile's
// GPUs per node that can take a job (idle, or busy but not down/drained).
func (r *run) nodes(part slurm.Partition, nodes []slurm.Node) bool {
	p := r.p
	need, what := 1, "a one-node job"
	gpus := p.Slurm.GPUsPerNode
	if r.o.Plan != nil {
		// A held deployment (slurmbench up --nodes) may ask for more
		// nodes than its recipe uses.
		need, what = max(r.o.Plan.Nodes, r.o.Plan.Slurm.Nodes), "the recipe"
		gpus = r.o.Plan.Slurm.GPUsPerNode
	}
	var inPart, withGPUs, usable, idle int
	most := 0
	for _, n := range nodes {
		if !slices.Contains(n.Partitions, part.Name) {
			continue
		}
		inPart++
		most = max(most, n.GPUs())
		if n.GPUs() < gpus {
			continue
		}
		withGPUs++
		if slices.ContainsFunc(n.State, func(s string) bool { return slices.Contains(unusable, strings.ToUpper(s)) }) {
			continue
		}
		usable++
		if slices.Contains(n.State, "IDLE") {
			idle++
		}
	}
	switch {
	case withGPUs == 0:
		r.fail("nodes", layerConfig, fmt.Sprintf("no node of partition %s has %d GPUs (%d nodes, at most %d GPUs each)", part.Name, gpus, inPart, most),
			fmt.Sprintf("set slurm.gpus_per_node in %s to what the nodes have, or pick another partition", p.Path))
		return false
	case withGPUs < need:
		r.fail("nodes", layerConfig, fmt.Sprintf("partition %s has %d nodes with %d GPUs; %s needs %d", part.Name, withGPUs, gpus, what, need),
			"pick a partition with more nodes (slurm.partition in "+p.Path+") or a recipe with fewer workers")
		return false
	case usable < need:
		r.fail("nodes", layerSlurm, fmt.Sprintf("only %d of partition %s's %d nodes with %d GPUs can take a job (the others are down or drained); %s needs %d",
			usable, part.Name, withGPUs, gpus, what, need),
			"wait for nodes to come back (slurmbench nodes --profile "+p.Path+" shows why), or pick another partition")
		return false
	}
	queue := ""
	if idle < need {
		queue = "; the job will wait for busy nodes"
	}
	r.pass("nodes", "%d of %d nodes in %s usable with %d GPUs (%d idle); %s needs %d%s", usable, inPart, part.Name, gpus, idle, what, need, queue)
	return true
}

// account checks the profile's account against the partition's allow and
// deny lists, which slurmrestd reports; accounting (sacctmgr) is not asked.
func (r *run) account(part slurm.Partition) bool {
	acct := r.p.Slurm.Account
	if r.o.Plan != nil {
		acct = r.o.Plan.Slurm.Account
	}
	if acct == "" {
		r.skip("account", "slurm.account not set (Slurm uses your default account)")
		return true
	}
	list := func(s string) []string {
		var out []string
		for _, a := range strings.Split(s, ",") {
			if a = strings.TrimSpace(a); a != "" {
				out = append(out, strings.ToLower(a))
			}
		}
		return out
	}
	fix := "set slurm.account in " + r.p.Path + " to an account you may charge (sacctmgr show assoc user=$USER)"
	a := strings.ToLower(acct)
	if allowed := list(part.AllowAccounts); len(allowed) > 0 && !slices.Contains(allowed, "all") && !slices.Contains(allowed, a) {
		r.fail("account", layerConfig, fmt.Sprintf("partition %s allows only accounts %s, not %s", part.Name, part.AllowAccounts, acct), fix)
		return false
	}
	if slices.Contains(list(part.DenyAccounts), a) {
		r.fail("account", layerConfig, fmt.Sprintf("partition %s denies account %s", part.Name, acct), fix)
		return false
	}
	r.pass("account", "%s may use partition %s", acct, part.Name)
	return true
}

// tokenSource says where the token came from, without the token.
func tokenSource(p *profile.Profile) string {
	env := p.Slurm.TokenEnv
	if env == "" {
		env = "SLURM_JWT"
	}
	var src []string
	src = append(src, "$"+env)
	if p.Slurm.TokenFile != "" {
		src = append(src, "token_file "+p.Slurm.TokenFile)
	}
	if len(p.Slurm.TokenCommand) > 0 {
		src = append(src, "token_command "+p.Slurm.TokenCommand[0])
	}
	return "from " + strings.Join(src, ", else ")
}

func tokenFix(p *profile.Profile) string {
	env := p.Slurm.TokenEnv
	if env == "" {
		env = "SLURM_JWT"
	}
	if len(p.Slurm.TokenCommand) > 0 {
		return fmt.Sprintf("make slurm.token_command in %s print a valid token (it runs in the profile's directory), or export a fresh $%s", p.Path, env)
	}
	return fmt.Sprintf("export a fresh $%s (scontrol token lifespan=7200), or set slurm.token_command in %s to mint one", env, p.Path)
}

func orUnknown(s string) string {
	if s == "" {
		return "(release unknown)"
	}
	return s
}
