package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/slurmbench/slurmbench/slurm/sbatch"
)

// maxSubmitBody bounds the job description read from the client (the
// script and the environment of one job).
const maxSubmitBody = 16 << 20

// submit is sbatch --parsable with the job description as a batch script:
// its fields as #SBATCH lines after the interpreter line (sbatch.Options),
// its environment as sbatch's own (--export=ALL hands exactly that to the
// job, as slurmrestd's environment field does). An option whose value a
// #SBATCH line cannot hold goes on sbatch's command line instead.
//
// The client sends a submit once and decides what a failure means: a
// CommandError (sbatch killed by the timeout, a communication error
// printed) is ambiguous, and the job is looked up by its submit key in
// the comment; any other failure is Slurm's verdict.
func (t *Transport) submit(ctx context.Context, req *http.Request, _ []string) (*http.Response, error) {
	var body struct {
		Job map[string]any `json:"job"`
	}
	if req.Body == nil {
		return failed(req, http.StatusBadRequest, 0, "submit without a job description"), nil
	}
	dec := json.NewDecoder(http.MaxBytesReader(nil, req.Body, maxSubmitBody))
	if err := dec.Decode(&body); err != nil || body.Job == nil {
		return failed(req, http.StatusBadRequest, 0, fmt.Sprintf("reading the job description: %v", err)), nil
	}
	script, argv, env, err := BatchScript(body.Job)
	if err != nil {
		return failed(req, http.StatusBadRequest, 0, err.Error()), nil
	}
	res, cmd, err := t.run(ctx, Command{Argv: append([]string{"sbatch", "--parsable", "--export=ALL"}, argv...), Env: env, Stdin: []byte(script)})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		if transient(res.Stderr) {
			return nil, commandError(cmd, res)
		}
		return failed(req, http.StatusInternalServerError, 0, rejection(cmd, res)), nil
	}
	id := parsableID.FindStringSubmatch(strings.TrimSpace(string(res.Stdout)))
	if id == nil {
		// sbatch said it succeeded but printed no id: the job may exist.
		return nil, &CommandError{Command: cmd.String(), Stderr: lastLines(res.Stderr), Err: fmt.Errorf("exit status 0 but no job id in %q", strings.TrimSpace(string(res.Stdout)))}
	}
	out := map[string]any{"job_id": json.Number(id[1]), "errors": []any{}}
	var warnings []map[string]string
	for line := range strings.Lines(string(res.Stderr)) {
		if w, ok := strings.CutPrefix(strings.TrimSpace(line), "sbatch: warning: "); ok {
			warnings = append(warnings, map[string]string{"description": w})
		}
	}
	out["warnings"] = warnings
	b, _ := json.Marshal(out)
	return respond(req, http.StatusOK, "application/json", b), nil
}

// parsableID is sbatch --parsable's output: "JOBID" or "JOBID;CLUSTER".
var parsableID = regexp.MustCompile(`^([0-9]+)(?:;\S*)?$`)

// rejection is sbatch's refusal for a message: the "Batch job submission
// failed: ..." line first (Slurm's reason), then the command and the rest.
func rejection(cmd Command, res Result) string {
	e := commandError(cmd, res).Error()
	for line := range strings.Lines(string(res.Stderr)) {
		if _, reason, ok := strings.Cut(line, "Batch job submission failed: "); ok {
			return strings.TrimSpace(reason) + "\n" + e
		}
	}
	return e
}

// BatchScript renders a job description (slurmrestd's job fields) as what
// sbatch reads: the script with #SBATCH lines after its interpreter line,
// the options a #SBATCH line cannot carry (for sbatch's command line), and
// the job's environment (sbatch's own). SLURM_CONF is passed on from
// slurmbench's environment when the job's does not set it, so a site's
// commands find their configuration.
func BatchScript(job map[string]any) (script string, argv, env []string, err error) {
	s, _ := job["script"].(string)
	first, rest, _ := strings.Cut(s, "\n")
	if !strings.HasPrefix(first, "#!") {
		return "", nil, nil, fmt.Errorf("job script must start with #! (an interpreter line)")
	}
	opts, err := sbatch.Options(job)
	if err != nil {
		return "", nil, nil, fmt.Errorf("rendering the job for sbatch: %w", err)
	}
	var b strings.Builder
	b.WriteString(first + "\n")
	for _, o := range opts {
		line, ok := directiveLine(o)
		if !ok {
			argv = append(argv, o.Arg())
			continue
		}
		b.WriteString(line + "\n")
	}
	b.WriteString(rest)
	env, err = environment(job["environment"])
	if err != nil {
		return "", nil, nil, err
	}
	if conf, ok := os.LookupEnv("SLURM_CONF"); ok && !hasVar(env, "SLURM_CONF") {
		env = append(env, "SLURM_CONF="+conf)
	}
	return b.String(), argv, env, nil
}

// directiveLine is o as a #SBATCH line. sbatch splits a #SBATCH line at
// white space outside quotes and drops the quotes, so a value with white
// space is double-quoted; a value holding a quote or a backslash has no
// #SBATCH spelling here and goes on the command line (ok false).
func directiveLine(o sbatch.Option) (string, bool) {
	if strings.ContainsAny(o.Value, "\"'\\") {
		return "", false
	}
	if strings.ContainsAny(o.Value, " \t") {
		return `#SBATCH --` + o.Name + `="` + o.Value + `"`, true
	}
	return "#SBATCH " + o.Arg(), true
}

func environment(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("job description has no environment (a list of KEY=VALUE)")
	}
	env := make([]string, 0, len(list))
	for _, e := range list {
		kv, ok := e.(string)
		if k, _, found := strings.Cut(kv, "="); !ok || !found || k == "" {
			return nil, fmt.Errorf("environment entry %v is not KEY=VALUE", e)
		}
		env = append(env, kv)
	}
	return env, nil
}

func hasVar(env []string, name string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}
