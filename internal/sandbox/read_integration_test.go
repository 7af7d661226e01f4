//go:build integration

package sandbox

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// read numbers lines from 1 whatever the offset, says where the next page
// starts, refuses binary files with their size and type, and returns an
// image a command made as an image.
func TestMatrixReadNumbersBinaryAndImages(t *testing.T) {
	var lines strings.Builder
	for i := 1; i <= 347; i++ {
		lines.WriteString("line\n")
	}
	var shot bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	if err := png.Encode(&shot, img); err != nil {
		t.Fatal(err)
	}
	for _, image := range []string{"busybox:latest", "litterbox-test/debian:bookworm"} {
		t.Run(imageName(image), func(t *testing.T) {
			m := matrixSandbox(t, image, testenv.Files{"long.txt": lines.String()})
			ctx := context.Background()
			r, err := m.Agent.Read(ctx, "work", "long.txt", 93, 12)
			if err != nil {
				t.Fatal(err)
			}
			if r.FirstLine != 94 || r.Lines != 12 || r.TotalLines != 347 || !r.Truncated || r.CapHit {
				t.Errorf("page: %+v", r)
			}
			if got := agent.Numbered(r.Content, r.FirstLine); !strings.HasPrefix(got, "    94\tline\n    95\tline\n") || !strings.HasSuffix(got, "   105\tline\n") {
				t.Errorf("numbered:\n%s", got)
			}

			bash(t, m, "head -c 3000 /dev/urandom > blob.bin; printf 'a\\0b' > nul.txt; echo "+base64.StdEncoding.EncodeToString(shot.Bytes())+" | base64 -d > shot.png")
			for _, p := range []string{"blob.bin", "nul.txt"} {
				var be *agent.BinaryError
				if _, err := m.Agent.Read(ctx, "work", p, 0, 0); !errors.As(err, &be) || !strings.Contains(err.Error(), p+" is a binary file (") || !strings.Contains(err.Error(), "application/octet-stream") {
					t.Errorf("%s: %v", p, err)
				}
			}
			r, err = m.Agent.Read(ctx, "work", "shot.png", 0, 0)
			if err != nil || r.Image == nil || r.Image.MIME != "image/png" || !bytes.Equal(r.Image.Data, shot.Bytes()) {
				t.Fatalf("image: %+v %v", r, err)
			}
		})
	}
}
