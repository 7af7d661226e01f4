package snapshot

import (
	"context"
	"errors"
	"fmt"

	"github.com/litterbox-dev/litterbox/gitcli"
)

// ensureTip makes the state name the branch's tip, read from the branch
// when it does not (a new sandbox, or after Forget).
func (s *Store) ensureTip(ctx context.Context, st *State) error {
	if st.Tip != "" && st.TipTree != "" {
		return nil
	}
	return s.readTip(ctx, st)
}

// readTip reads the branch's tip and its tree into the state.
func (s *Store) readTip(ctx context.Context, st *State) error {
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
	st.Tip, st.TipTree = tip, tree
	return nil
}

// Forget drops what the state says of the branch, so the next snapshot
// reads it again: after a failure the branch may be elsewhere.
func (s *Store) Forget(st *State) {
	st.Tip, st.TipTree = "", ""
}

// commit applies entries to the tip's tree and, when the tree changed,
// commits it on the branch. A branch moved by someone else is never
// overwritten: the change is made again on top of where it is now.
func (s *Store) commit(ctx context.Context, st *State, entries []gitcli.Entry, message string) (string, error) {
	if len(entries) == 0 {
		return "", nil
	}
	if err := s.ensureTip(ctx, st); err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		id, tree, err := s.Git.CommitChanges(ctx, gitcli.ChangeSpec{
			Parent: st.Tip, Changes: entries, Message: message,
			Author: s.Author, Committer: s.Committer(ctx),
		})
		if err != nil {
			return "", err
		}
		if tree == st.TipTree {
			// Nothing git tracks changed: the commit made is left for gc.
			return "", nil
		}
		err = s.Git.UpdateRef(ctx, s.Ref, id, st.Tip, "litterbox snapshot")
		if errors.Is(err, gitcli.ErrRefMoved) && attempt < 3 {
			if err := s.readTip(ctx, st); err != nil {
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
