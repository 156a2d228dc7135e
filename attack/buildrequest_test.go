package attack

import (
	"context"
	"net/http"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// TestBuildRequestHeadersOwnTheirValues: the headers buildRequest sets are
// the ones it always set, each request's values are its own (two attempts
// share no bytes), and appending to one header's values changes no other.
func TestBuildRequestHeadersOwnTheirValues(t *testing.T) {
	e := &engine{o: &Options{}}
	c := &clientState{basic: "Basic YmVuY2g6cGFzcw=="}
	build := func() *http.Request {
		var a rundir.Attempt
		req, _, ok := e.buildRequest(context.Background(), c, &a, http.MethodPost, "http://127.0.0.1:1/messaging/v1/send", []byte(`{}`), nil)
		if !ok {
			t.Fatalf("no request: %+v", a)
		}
		return req
	}
	r1, r2 := build(), build()
	want := map[string]string{"Content-Type": "application/json", "Accept": "application/json", "Authorization": c.basic}
	for _, r := range []*http.Request{r1, r2} {
		for k, v := range want {
			if got := r.Header.Values(k); len(got) != 1 || got[0] != v {
				t.Errorf("%s: %q, want [%q]", k, got, v)
			}
		}
	}
	r1.Header["Accept"][0] = "text/plain"
	r1.Header.Add("Content-Type", "text/plain")
	r1.Header.Add("Accept", "text/html")
	if got := r2.Header.Get("Accept"); got != "application/json" {
		t.Errorf("the second request's Accept became %q with the first's", got)
	}
	if got := r1.Header.Values("Authorization"); len(got) != 1 || got[0] != c.basic {
		t.Errorf("an append to Content-Type and Accept changed Authorization: %q", got)
	}
	if got := r1.Header.Values("Accept"); len(got) != 2 || got[0] != "text/plain" || got[1] != "text/html" {
		t.Errorf("Accept %q, want [text/plain text/html]", got)
	}
}

// BenchmarkBuildRequest: buildRequest on a first attempt's request (vegeta's,
// its header map empty but for the sequence header buildRequest deletes).
func BenchmarkBuildRequest(b *testing.B) {
	e := &engine{o: &Options{}}
	c := &clientState{basic: "Basic YmVuY2g6cGFzcw=="}
	body := []byte(`{}`)
	ctx := context.Background()
	reuse, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/messaging/v1/send", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var a rundir.Attempt
		r := reuse.WithContext(ctx) // as the first attempt's: vegeta's request, its header map emptied
		r.Header = make(http.Header)
		if _, _, ok := e.buildRequest(ctx, c, &a, http.MethodPost, "", body, r); !ok {
			b.Fatal("no request")
		}
	}
}
