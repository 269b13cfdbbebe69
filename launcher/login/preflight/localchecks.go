package preflight

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/login/submit"
)

// jobSpec builds the job description run would submit: an sbatch directive
// slurmbench cannot send fails here, not at submit.
func (r *run) jobSpec() {
	spec, err := submit.JobSpec(r.o.Plan, nil)
	if err != nil {
		r.fail("job-spec", layerConfig, errText(err), "fix slurm.directives in "+r.p.Path)
		return
	}
	r.pass("job-spec", "%s nodes × %d GPUs, partition %s, %s", spec.Nodes, spec.GPUsPerNode, spec.Partition, spec.TimeLimit)
}

// dirs checks that runs_dir and squash_dir can be written: the directory
// exists and takes a file, or does not exist yet and its nearest existing
// parent takes one (run creates it).
func (r *run) dirs() {
	r.writable("runs-dir", "paths.runs_dir", r.p.Paths.RunsDir)
	if r.p.Container.Runtime == profile.RuntimeNone {
		r.skip("squash-dir", "container.runtime is none")
		return
	}
	if r.p.ImportOnNodes() {
		// On each node's own disk: the job creates and fills it there.
		r.pass("squash-dir", "paths.squash_dir %s is on each node; the job imports the image there", r.p.Paths.SquashDir)
	} else {
		r.writable("squash-dir", "paths.squash_dir", r.p.Paths.SquashDir)
	}
}

func (r *run) writable(name, key, dir string) {
	fix := fmt.Sprintf("make %s writable for you, or set %s in %s to a writable directory on the shared filesystem", dir, key, r.p.Path)
	probe, missing := dir, false
	for {
		st, err := os.Stat(probe)
		if err == nil {
			if !st.IsDir() {
				r.fail(name, layerConfig, probe+" is not a directory", fix)
				return
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			r.fail(name, layerConfig, errText(err), fix)
			return
		}
		missing = true
		parent := filepath.Dir(probe)
		if parent == probe {
			break
		}
		probe = parent
	}
	f, err := os.CreateTemp(probe, ".slurmbench-doctor-*")
	if err != nil {
		detail := dir + " is not writable: " + errText(err)
		if missing {
			detail = dir + " does not exist and cannot be created: " + errText(err)
		}
		r.fail(name, layerConfig, detail, fix)
		return
	}
	f.Close()
	os.Remove(f.Name())
	if missing {
		r.pass(name, "%s does not exist yet; %s is writable, so it will be created", dir, probe)
		return
	}
	r.pass(name, "%s is writable", dir)
}

// models checks the plan's model directory, or every model of the profile
// without a plan. Hugging Face ids (hf:...) are fetched in the job.
func (r *run) models() {
	if r.o.Plan != nil {
		src := r.o.Plan.Model.Source
		if strings.HasPrefix(src, "hf:") {
			r.skip("model", src+" is downloaded inside the job")
			return
		}
		alias := ""
		for a, d := range r.p.Models {
			if d == src {
				alias = a
			}
		}
		fix := "put the weights in " + src + ", or point the recipe's model.path at the directory that holds them"
		if alias != "" {
			fix = fmt.Sprintf("put the weights in %s, or set models.%s in %s to the directory that holds them", src, alias, r.p.Path)
		}
		r.modelDir("model", src, fix)
		return
	}
	if len(r.p.Models) == 0 {
		r.skip("model", "the profile names no models")
		return
	}
	for _, alias := range profile.SortedKeys(r.p.Models) {
		src := r.p.Models[alias]
		if strings.HasPrefix(src, "hf:") {
			continue
		}
		r.modelDir("model "+alias, src, fmt.Sprintf("set models.%s in %s to the directory that holds the weights", alias, r.p.Path))
	}
}

func (r *run) modelDir(name, dir, fix string) {
	st, err := os.Stat(dir)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		r.fail(name, layerConfig, dir+" does not exist", fix)
	case err != nil:
		r.fail(name, layerConfig, errText(err), fix)
	case !st.IsDir():
		r.fail(name, layerConfig, dir+" is not a directory", fix)
	default:
		r.pass(name, "%s exists", dir)
	}
}

// images checks that the plan's image is a squash file that exists or a
// reference an import can fetch (and that this machine can import it when
// imports run here); without a plan, every container alias of the profile.
func (r *run) images() {
	if r.p.Container.Runtime == profile.RuntimeNone {
		r.skip("image", "container.runtime is none")
		return
	}
	if pl := r.o.Plan; pl != nil {
		if pl.Image.Ref == "" {
			r.squash("image", pl.Image.Squash, "point the recipe's model.container (or --image) at an existing .sqsh file or an image reference")
			return
		}
		if _, err := os.Stat(pl.Image.Squash); err == nil {
			r.pass("image", "%s is imported: %s", pl.Image.Ref, pl.Image.Squash)
			return
		}
		r.importable("image", pl.Image.Ref, pl.Image.Squash)
		return
	}
	if len(r.p.Containers) == 0 {
		r.skip("image", "the profile names no containers (recipes name theirs)")
		return
	}
	for _, alias := range profile.SortedKeys(r.p.Containers) {
		ref, name := r.p.Containers[alias], "image "+alias
		parsed, err := enroot.ParseRef(ref)
		switch {
		case err != nil:
			r.fail(name, layerConfig, errText(err), fmt.Sprintf("fix containers.%s in %s", alias, r.p.Path))
		case parsed.IsLocal():
			r.squash(name, parsed.Path, fmt.Sprintf("fix containers.%s in %s", alias, r.p.Path))
		default:
			sq := filepath.Join(r.p.Paths.SquashDir, parsed.SquashName())
			if _, err := os.Stat(sq); err == nil {
				r.pass(name, "%s is imported: %s", parsed.String(), sq)
				continue
			}
			r.importable(name, parsed.String(), sq)
		}
	}
}

func (r *run) squash(name, path, fix string) {
	if _, err := os.Stat(path); err != nil {
		r.fail(name, layerConfig, "squash file "+path+" does not exist", fix)
		return
	}
	r.pass(name, "squash file %s exists", path)
}

// importable: the ref is not imported yet, so run will import it. On a
// compute node the probe says whether enroot is there; here, enroot must be.
func (r *run) importable(name, ref, squash string) {
	if r.p.ImportOnCompute() {
		r.pass(name, "%s is not imported yet; run imports it on a compute node into %s", ref, squash)
		return
	}
	progs, field := []string{cmp.Or(r.p.Container.Enroot, "enroot")}, "container.enroot"
	if r.p.Container.Runtime == profile.RuntimeOCI {
		// The oci runtime imports with skopeo and umoci (enroot/oci).
		progs, field = []string{cmp.Or(r.p.Container.Skopeo, "skopeo"), cmp.Or(r.p.Container.Umoci, "umoci")}, "container.skopeo and container.umoci"
	}
	for _, prog := range progs {
		if _, err := exec.LookPath(prog); err != nil {
			r.fail(name, layerConfig, fmt.Sprintf("%s is not imported yet and %s is not on this machine (%v)", ref, prog, errText(err)),
				fmt.Sprintf("install %s here, set %s in %s, or set container.import_on = \"compute\" there", filepath.Base(prog), field, r.p.Path))
			return
		}
	}
	r.pass(name, "%s is not imported yet; run imports it here with %s into %s", ref, strings.Join(progs, " and "), squash)
}
