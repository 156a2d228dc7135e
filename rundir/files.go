package rundir

// Names of the files in runs/<id>/.
const (
	ScenarioFile = "scenario.yaml"  // resolved scenario, secrets redacted
	MetaFile     = "run.json"       // Meta: what was planned and when it ran
	ResultsFile  = "results.bin"    // vegeta's gob encoding; `vegeta report results.bin`
	AttemptsFile = "attempts.jsonl" // one Attempt a line
	EventsFile   = "events.jsonl"   // one Event a line (the sink's log)
	TruthFile    = "truth.json"     // Truth whole: older runs, and small truths written beside truth.jsonl for old readers
	// TruthStreamFile is the embedded simulator's truth as it was drawn, one
	// TruthRecord a line (the run's primary record of the truth).
	TruthStreamFile = "truth.jsonl"
	SummaryFile     = "summary.json" // written by package reports
	HTMLFile        = "report.html"
	MarkdownFile    = "report.md"
	JUnitFile       = "junit.xml"
	// ContractFile is what msgload characterise found of the service, one
	// finding per rule (reports.Contract).
	ContractFile = "contract.json"
	// CompareFile is the comparison against the baseline run (msgload run or
	// report --baseline), as `msgload compare --json` writes it; a build
	// without a baseline removes it.
	CompareFile = "compare.json"
	// LostFile lists every lost message of the run (late ones flagged), one
	// LostMessage a line, as the report's analysis decided it: written whole
	// by each build of the reports (msgload run's end, msgload report,
	// --merge), never by a checkpoint, and absent when delivery was not
	// measured.
	LostFile = "lost.jsonl"
	// TargetMemoryFile is the target's memory as its metrics endpoint told
	// it during the attack (scenario target.metrics), one MemorySample a
	// line, each written when it was taken: the drift's memory_slope.
	TargetMemoryFile = "target-memory.jsonl"
)

// ChartFile is the name of a chart's SVG file beside report.md: chart-latency
// → chart-latency.svg. ChartGlob matches every one (a rebuild removes those no
// longer drawn).
func ChartFile(id string) string { return id + ".svg" }

// ChartGlob matches the chart files of a run directory.
const ChartGlob = "chart-*.svg"
