package attack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// tokenCache holds one notify client's bearer token: fetched with the
// client-credentials grant when missing or about to expire, and fetched again
// when the service answers 401 to it.
type tokenCache struct {
	cfg  clientcredentials.Config
	hctx context.Context // carries the recording HTTP client (oauth2.HTTPClient)

	mu    sync.Mutex
	tok   *oauth2.Token
	renew time.Time // when to fetch a new token before tok expires (zero: never)
	// hold keeps tok until the service refuses it (Options.HoldToken).
	hold bool
}

// renewAt is when a token fetched at got and expiring at exp is renewed: 10 s
// before it expires (oauth2's own margin), or a quarter of its life before
// when it lives less than 40 s, so a short-lived token (a scaled-down
// scenario's) is not fetched again for every request.
func renewAt(got, exp time.Time) time.Time {
	if exp.IsZero() {
		return time.Time{}
	}
	return exp.Add(-min(10*time.Second, exp.Sub(got)/4))
}

func newTokenCache(c Client, tokenURL string, hc *http.Client) *tokenCache {
	return &tokenCache{
		cfg: clientcredentials.Config{
			ClientID:     c.ID,
			ClientSecret: c.Secret,
			TokenURL:     tokenURL,
			AuthStyle:    oauth2.AuthStyleInParams, // the seed's form fields client_id and client_secret
		},
		hctx: context.WithValue(context.Background(), oauth2.HTTPClient, hc),
	}
}

// token returns a valid access token, fetching a new one when needed.
func (t *tokenCache) token(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok != nil && (t.hold || t.renew.IsZero() || time.Now().Before(t.renew)) {
		return t.tok.AccessToken, nil
	}
	// The request runs under ctx's cancellation but with the recording client.
	hctx, cancel := context.WithCancel(t.hctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	got := time.Now()
	tok, err := t.cfg.Token(hctx)
	if err != nil {
		return "", fmt.Errorf("get token for client %q: %w", t.cfg.ClientID, redactTokenError(err))
	}
	t.tok, t.renew = tok, renewAt(got, tok.Expiry)
	return tok.AccessToken, nil
}

// invalidate drops the token if it is still the one refused, so the next call
// fetches a new one (other goroutines may have refreshed it already).
func (t *tokenCache) invalidate(refused string) {
	t.mu.Lock()
	if t.tok != nil && t.tok.AccessToken == refused {
		t.tok = nil
	}
	t.mu.Unlock()
}

// redactTokenError keeps the status of a token endpoint error but drops the
// response body, which could echo credentials.
func redactTokenError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		return fmt.Errorf("token endpoint answered %s", re.Response.Status)
	}
	return err
}
