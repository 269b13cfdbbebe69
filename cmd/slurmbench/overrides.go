package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// overrideList collects --set and --unset in the order given (an --unset
// then a --set of the same key differs from the reverse), without urfave's
// comma splitting: a value may be a list ("[8, 32]").
type overrideList struct{ list []recipe.Override }

// overrideFlag is one of the two flags feeding an overrideList.
type overrideFlag struct {
	into  *overrideList
	unset bool
}

func (f *overrideFlag) Set(v string) error {
	parse := recipe.ParseSet
	if f.unset {
		parse = recipe.ParseUnset
	}
	o, err := parse(v)
	if err != nil {
		return err
	}
	f.into.list = append(f.into.list, o)
	return nil
}

func (f *overrideFlag) String() string {
	if f == nil || f.into == nil {
		return ""
	}
	var s []string
	for _, o := range f.into.list {
		s = append(s, o.String())
	}
	return strings.Join(s, " ")
}

// overrideFlags are --set and --unset, sharing one ordered list.
func overrideFlags() []cli.Flag {
	list := &overrideList{}
	return []cli.Flag{
		&cli.GenericFlag{Name: "set", Usage: "set a recipe value by dotted path before it is read, `KEY=VALUE` (repeatable; VALUE is a YAML scalar or flow list, e.g. --set health_check.max_attempts=720 --set 'benchmark.concurrencies=[8, 32]'); on an override file it applies to base and every variant", Value: &overrideFlag{into: list}},
		&cli.GenericFlag{Name: "unset", Usage: "remove a recipe key by dotted path before it is read, `KEY` (repeatable)", Value: &overrideFlag{into: list, unset: true}},
	}
}

// overridesOf returns the --set/--unset edits of c in the order given.
func overridesOf(c *cli.Context) []recipe.Override {
	for _, name := range []string{"set", "unset"} {
		if f, ok := c.Generic(name).(*overrideFlag); ok && f != nil && f.into != nil {
			return f.into.list
		}
	}
	return nil
}
