package reports

import (
	"encoding/xml"
	"io"
	"time"
)

// JUnitSuites is a junit.xml document, which follows the strict JUnit schema
// (the Apache Ant format as the windyroad JUnit.xsd states it;
// reports/testdata/junit/junit-strict.xsd): <testsuites> without
// attributes, each <testsuite> with package, id, name,
// timestamp (UTC, to the second, no zone), hostname, tests, failures, errors,
// skipped and time, then properties, test cases, system-out and system-err.
type JUnitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one <testsuite>: a run's, a part's or a contract's.
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Package    string          `xml:"package,attr"`
	ID         int             `xml:"id,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr"`
	Tests      int             `xml:"tests,attr"`
	Fails      int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []JUnitProperty `xml:"properties>property"`
	Cases      []JUnitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out"`
	SystemErr  string          `xml:"system-err"`
}

// JUnitProperty is one of a suite's properties.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one <testcase>: failing, or in error, when it has one.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitFailure `xml:"failure,omitempty"`
	Error     *JUnitFailure `xml:"error,omitempty"`
}

// JUnitFailure is a test case's <failure> or <error>.
type JUnitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnitTimestamp is the run's start as the schema's timestamp: UTC, to the
// second, without a zone (the schema refuses fractions and zones). A run without
// a start time gets the epoch.
func JUnitTimestamp(start string) string {
	t, err := time.Parse(time.RFC3339Nano, start)
	if err != nil {
		t = time.Unix(0, 0)
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}

// WriteJUnitDoc writes a junit.xml document.
func WriteJUnitDoc(w io.Writer, doc JUnitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
