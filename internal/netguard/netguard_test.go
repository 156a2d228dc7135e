package netguard

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.9.9.9": true, "::1": true, "[::1]": true,
		"10.0.0.1": false, "0.0.0.0": false, "evil.example": false, "127.0.0.1.evil.example": false, "": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestLocalHost(t *testing.T) {
	for _, tc := range []struct {
		host   string
		listen []string
		want   bool
	}{
		{"127.0.0.1:8082", nil, true},
		{"localhost", nil, true},
		{"[::1]:9", nil, true},
		{"evil.example", nil, false},
		{"evil.example:8082", []string{"127.0.0.1:8082"}, false},
		{"sink.lan:8082", []string{"sink.lan:8082"}, true},
		{"sink.lan", []string{"sink.lan:8082"}, true},
		{"", nil, false},
	} {
		if got := LocalHost(tc.host, tc.listen...); got != tc.want {
			t.Errorf("LocalHost(%q, %q) = %v, want %v", tc.host, tc.listen, got, tc.want)
		}
	}
}

// A redirect on the same host is followed; to another host:port (standing
// for an unconfirmed host) it is not, and the posted body never gets there.
func TestClientRedirects(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/token", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/final", http.StatusTemporaryRedirect)
		case "/final":
			b, _ := io.ReadAll(r.Body)
			w.Write(b)
		}
	}))
	defer srv.Close()
	c := Client(nil)
	resp, err := c.Post(srv.URL+"/here", "application/x-www-form-urlencoded", strings.NewReader("client_secret=s"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "client_secret=s" {
		t.Errorf("same-host redirect: got %q", b)
	}
	_, err = c.Post(srv.URL+"/away", "application/x-www-form-urlencoded", strings.NewReader("client_secret=s"))
	if !errors.Is(err, ErrRedirect) || reached.Load() != 0 {
		t.Errorf("redirect elsewhere: err %v, other host reached %d times", err, reached.Load())
	}
}
