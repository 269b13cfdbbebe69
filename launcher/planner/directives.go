package planner

import (
	"errors"
	"fmt"

	"github.com/slurmbench/slurmbench/slurm/sbatch"
)

// checkDirectives refuses, when planning, an sbatch directive the job
// description cannot carry (sbatch.Directives, which submit uses),
// naming the recipe's field or the profile's: srtctl writes every
// directive as an #SBATCH line; slurmbench submits through slurmrestd and
// must find each one its job field.
func (b *builder) checkDirectives(d map[string]string) error {
	_, err := sbatch.Directives(d)
	if err == nil {
		return nil
	}
	var errs []error
	for _, e := range unjoin(err) {
		var de *sbatch.DirectiveError
		if !errors.As(e, &de) {
			errs = append(errs, e)
			continue
		}
		if _, ok := b.r.SbatchDirectives[de.Directive]; ok {
			errs = append(errs, b.fail("sbatch_directives."+de.Directive, "%v", e))
		} else {
			errs = append(errs, fmt.Errorf("profile %s: slurm.directives: %w", b.p.Path, e))
		}
	}
	return errors.Join(errs...)
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
