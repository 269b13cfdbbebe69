package srtlanes

// Launch is what the lane tables decide for one request on one cluster:
// the path it takes, its lane's row (nil: none) and the request the rules
// read. It is the one place a launch's lane is decided: `slurmbench run`
// (InferenceX's workflow step, package workflow) and `slurmbench matrix`
// both take it from runners.Cluster.Lane (which adds the record's own
// check), so a matrix point on a cluster gets what the workflow's launch
// of its row on that cluster gets: the same refusal, recipe edits, setup
// script, mounts (runners.Cluster.LaneMounts) and time limit
// (Table.JobTimeLimit).
type Launch struct {
	Cluster string
	Path    Path
	Lane    *Lane
	Request Request
}

// Decide is r's launch on cluster (Table.Of).
func (t Table) Decide(cluster string, r Request) Launch {
	l, p := t.Of(cluster, r)
	return Launch{Cluster: cluster, Path: p, Lane: l, Request: r}
}

// Check refuses a launch its lane does not run (Lane.Check): a
// *RefusedError.
func (l Launch) Check() error { return l.Lane.Check(l.Request) }

// SetupScript is the lane's setup script of the launch ("" : the recipe's).
func (l Launch) SetupScript() string { return l.Lane.SetupScript(l.Request) }

// Edit is one recipe edit a lane makes: the argument of --set
// (KEY=VALUE) or, Unset, of --unset (KEY).
type Edit struct {
	Unset bool
	Arg   string
}

// Flag is the edit as srtctl's command line gives it.
func (e Edit) Flag() string {
	if e.Unset {
		return "--unset " + e.Arg
	}
	return "--set " + e.Arg
}

// Edits are the lane's recipe edits of the launch, in the order
// InferenceX's submission gives them (drivers/srt/submit.py@43c3fcfc,
// multinode_arguments): real verification's --set, the eval --unsets,
// then the setup script as --set setup_script=<file>, which srtctl puts in
// place of the recipe's setup_script.
func (l Launch) Edits() []Edit {
	var out []Edit
	e := l.Lane.EvalEdits(l.Request)
	for _, s := range e.Sets {
		out = append(out, Edit{Arg: s})
	}
	for _, k := range e.Unsets {
		out = append(out, Edit{Unset: true, Arg: k})
	}
	if s := l.SetupScript(); s != "" {
		out = append(out, Edit{Arg: "setup_script=" + s})
	}
	return out
}
