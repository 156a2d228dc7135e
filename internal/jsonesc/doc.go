// Package jsonesc writes a Go string as a JSON string, byte for byte what
// encoding/json.Marshal writes for it, without reflection or allocation: the
// request bodies (attack/message), the attempt log (attack) and the sink's
// event log are built by hand on their hot paths, and one escaper keeps them
// from drifting apart.
//
// What it writes, as json.Marshal does:
//   - `"` and `\` as \" and \\; \b, \f, \n, \r and \t in their short form;
//     every other byte below 0x20 as \u00XX;
//   - <, > and & as \u003c, \u003e and \u0026 (HTML escaping, json.Marshal's
//     default): the attempt log must be what json.Marshal writes, and the
//     other callers' readers decode JSON, to whom both forms are the same
//     string. A body with such characters is a few bytes longer for it;
//   - U+2028 and U+2029 as \u2028 and \u2029 (valid JSON, but line breaks to
//     JavaScript);
//   - each byte of invalid UTF-8 as \ufffd;
//   - everything else, DEL and valid multi-byte UTF-8 included, as it is.
package jsonesc
