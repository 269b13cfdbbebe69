package yamltree

import "fmt"

// Error is a problem at a place in a YAML document: the file, the line
// (0 when unknown) and the dotted field to blame ("" when none). It is the
// one located error of the recipe reader and the layers under it; package
// recipe names it recipe.Error.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
}
