package gitcli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/runner"
)

// WorkTreeAttrs returns, for each path of workTree, the values git gives
// the attributes named: "unspecified", "set", "unset" or the value. They
// are read as HashWorkTreeFiles's hashing reads them, so they say what it
// would do to a file at that path.
func (c *Client) WorkTreeAttrs(ctx context.Context, gitDir, workTree string, paths []string, attrs ...string) (map[string]map[string]string, error) {
	return c.checkAttr(ctx, c.inWorkTree(gitDir, workTree, checkAttrArgs(attrs)...), paths)
}

// Attrs is WorkTreeAttrs for the client's own repository: the attributes
// its work tree (and index) give each path now.
func (c *Client) Attrs(ctx context.Context, paths []string, attrs ...string) (map[string]map[string]string, error) {
	return c.checkAttr(ctx, c.inRepo(runner.Cmd{Args: checkAttrArgs(attrs)}), paths)
}

func checkAttrArgs(attrs []string) []string {
	return append([]string{"check-attr", "-z", "--stdin"}, attrs...)
}

func (c *Client) checkAttr(ctx context.Context, cmd runner.Cmd, paths []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	if len(paths) == 0 {
		return out, nil
	}
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	res, err := c.Runner.Run(ctx, cmd)
	if err != nil {
		return nil, err
	}
	// -z gives path, attribute and value, each ended by a NUL.
	f := bytes.Split(res.Stdout, []byte{0})
	for i := 0; i+2 < len(f); i += 3 {
		p := string(f[i])
		if out[p] == nil {
			out[p] = map[string]string{}
		}
		out[p][string(f[i+1])] = string(f[i+2])
	}
	return out, nil
}

// WorkTreeConfig runs git config with args as HashWorkTreeFiles's hashing
// reads the config, and returns its output.
func (c *Client) WorkTreeConfig(ctx context.Context, gitDir, workTree string, args ...string) (string, error) {
	res, err := c.Runner.Run(ctx, c.inWorkTree(gitDir, workTree, append([]string{"config"}, args...)...))
	return string(res.Stdout), err
}

// ReadBlobs streams the objects ids name, in order, to each: its type,
// size and, with content, its content (to be read in full or not at all;
// what is left is skipped; without content, empty). A missing object is
// given type "missing".
func (c *Client) ReadBlobs(ctx context.Context, ids []string, content bool, each func(id, typ string, size int64, content io.Reader) error) error {
	if len(ids) == 0 {
		return nil
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := readBatch(bufio.NewReaderSize(pr, 64<<10), ids, content, each)
		// The reader's end (its failure, or nil: io.ErrClosedPipe) ends
		// git too: it cannot write any more.
		pr.CloseWithError(err)
		done <- err
	}()
	in := strings.NewReader(strings.Join(ids, "\n") + "\n")
	batch := "--batch-check"
	if content {
		batch = "--batch"
	}
	_, err := c.run(ctx, runner.Cmd{Args: []string{"cat-file", batch}, Stdin: in, Stdout: pw})
	pw.Close()
	rerr := <-done
	if err != nil {
		return err // git's failure is the cause of the reader's
	}
	return rerr
}

// readBatch parses cat-file --batch: "<id> <type> <size>\n<content>\n" an
// object, "<id> missing\n" for one it lacks; --batch-check (withContent
// false) is the same without content.
func readBatch(r *bufio.Reader, ids []string, withContent bool, each func(id, typ string, size int64, content io.Reader) error) error {
	for _, id := range ids {
		line, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("git cat-file ended before %s: %w", id, err)
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == id && f[1] == "missing":
			if err := each(id, "missing", 0, strings.NewReader("")); err != nil {
				return err
			}
			continue
		case len(f) != 3 || f[0] != id:
			return fmt.Errorf("git cat-file answered %q for %s", strings.TrimSpace(line), id)
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("git cat-file gave %s the size %q", id, f[2])
		}
		if !withContent {
			if err := each(id, f[1], size, strings.NewReader("")); err != nil {
				return err
			}
			continue
		}
		content := io.LimitReader(r, size)
		if err := each(id, f[1], size, content); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, content); err != nil {
			return err
		}
		if b, err := r.ReadByte(); err != nil || b != '\n' {
			return fmt.Errorf("git cat-file's content of %s does not end where its size says", id)
		}
	}
	return nil
}

// ImportBlobs stores the blobs of a fast-import stream read from r ("blob",
// "data N", the content), in one process: a pack for many, loose objects
// for a few, without the file each hash-object reads and each loose object
// it writes. No delta is sought and the pack is compressed as loose objects
// are (level 1): the time is the transfer's, and gc packs them anew.
func (c *Client) ImportBlobs(ctx context.Context, r io.Reader) error {
	_, err := c.run(ctx, runner.Cmd{Args: []string{"-c", "pack.compression=1", "fast-import", "--quiet", "--depth=0"}, Stdin: r})
	return err
}
