package planner

// What the external tests (package planner_test, which may import the
// planner's consumers such as migrationcheck) share with the package's own.
var (
	CorpusRecipes        = corpusRecipes
	CorpusRoot           = corpusRoot
	CorpusProfileFor     = corpusProfileFor
	SrtctlReferenceLists = srtctlReferenceLists
	SrtctlRecordings     = srtctlRecordings
	TestResolveImage     = testResolveImage
)

const (
	TestBinary      = testBinary
	CorpusRendered  = corpusRendered
	OverrideConfigs = overrideConfigs
)
