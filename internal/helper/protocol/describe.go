package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Describe renders what the host sent a helper (a whole act conversation's
// stdin, or a kept stream's many) as the messages it carries, one a line: record/replay transcripts
// match an exec's input by this rather than by its bytes, so a change of
// encoding that carries the same requests keeps them valid, and a
// mismatch reads as the request that differs.
func Describe(stream []byte) string {
	r := NewReader(bytes.NewReader(stream))
	var b strings.Builder
	for {
		t, p, err := r.Next()
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			fmt.Fprintf(&b, "unreadable: %v\n", err)
			return b.String()
		}
		var msg any
		extra := ""
		switch t {
		case TRequest:
			req, err := DecodeRequest(p)
			if err != nil {
				msg = err.Error()
				break
			}
			msg = req
			if req.ContentLen > 0 {
				h := sha256.New()
				n, _ := io.Copy(h, r.Raw(int64(req.ContentLen)))
				extra = fmt.Sprintf("content: %d bytes, sha256 %s\n", n, hex.EncodeToString(h.Sum(nil)))
			}
		case TPrune:
			msg, err = DecodePrune(p)
		case TSelect:
			msg, err = DecodeSelect(p)
		case TCancel:
			msg = "cancel"
		case TOver:
			msg = "over"
		case TPing:
			msg = "ping"
		case TCall:
			// The names only: a value may be a secret, and a transcript
			// or a mismatch's report must not hold it.
			var c *Call
			if c, err = DecodeCall(p); err == nil {
				names := []string{}
				for _, kv := range c.Env {
					name, _, _ := strings.Cut(kv, "=")
					names = append(names, name)
				}
				msg = map[string][]string{"env": names}
			}
		default:
			msg = fmt.Sprintf("%d bytes", len(p))
		}
		if err != nil {
			msg = err.Error()
		}
		j, _ := json.Marshal(msg)
		fmt.Fprintf(&b, "%c %s\n%s", t, j, extra)
	}
}
