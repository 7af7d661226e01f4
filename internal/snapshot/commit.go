package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/litterbox-dev/litterbox/gitcli"
)

// ensureIndex makes the private index hold the branch tip.
func (s *Store) ensureIndex(ctx context.Context, st *State) error {
	if st.Tip != "" {
		if _, err := os.Stat(string(s.Index)); err == nil {
			return nil
		}
	}
	return s.ResetIndex(ctx, st)
}

// ResetIndex reads the branch tip into the private index.
func (s *Store) ResetIndex(ctx context.Context, st *State) error {
	tip, err := s.Git.RevParse(ctx, s.Ref)
	if err != nil {
		return err
	}
	if tip == "" {
		return fmt.Errorf("branch %s is gone; the sandbox's changes cannot be committed (recreate it with: git branch %s <commit>)", s.Branch, s.Branch)
	}
	tree, err := s.Git.RevParse(ctx, tip+"^{tree}")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(string(s.Index)), 0o755); err != nil {
		return err
	}
	if err := s.Git.ReadTree(ctx, s.Index, tip); err != nil {
		return err
	}
	st.Tip, st.TipTree = tip, tree
	return nil
}

// Forget drops the private index, so the next snapshot rebuilds it from the
// branch: after a failure it may hold changes no commit has.
func (s *Store) Forget(st *State) {
	os.Remove(string(s.Index))
	st.Tip = ""
}

// commit applies entries to the private index and, when the tree changed,
// commits it on the branch. A branch moved by someone else is never
// overwritten: the change is rebuilt on top of where it is now.
func (s *Store) commit(ctx context.Context, st *State, entries []gitcli.Entry, message string) (string, error) {
	if len(entries) == 0 {
		return "", nil
	}
	for attempt := 0; ; attempt++ {
		if err := s.Git.UpdateIndex(ctx, s.Index, entries); err != nil {
			return "", err
		}
		tree, err := s.Git.WriteTree(ctx, s.Index)
		if err != nil {
			return "", err
		}
		if tree == st.TipTree {
			return "", nil
		}
		id, err := s.Git.CommitTree(ctx, gitcli.CommitSpec{
			Tree: tree, Parents: []string{st.Tip}, Message: message,
			Author: s.Author, Committer: s.Committer(ctx),
		})
		if err != nil {
			return "", err
		}
		err = s.Git.UpdateRef(ctx, s.Ref, id, st.Tip, "litterbox snapshot")
		if errors.Is(err, gitcli.ErrRefMoved) && attempt < 3 {
			if err := s.ResetIndex(ctx, st); err != nil {
				return "", err
			}
			continue
		}
		if err != nil {
			return "", err
		}
		st.Tip, st.TipTree = id, tree
		return id, nil
	}
}
