package mapreduce

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// Map runs f over every part with at most limit calls at a time (1 when
// limit < 1) and returns the results in the parts' order. The first error
// cancels the calls still to start and is returned, wrapped with the part
// it came from; the results of the parts that finished are returned too.
func Map[R any](ctx context.Context, parts []Part, limit int, f func(ctx context.Context, p Part) (R, error)) ([]R, error) {
	out := make([]R, len(parts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(limit, 1))
	for i, p := range parts {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			r, err := f(gctx, p)
			if err != nil {
				return fmt.Errorf("part %d of %d: %w", i+1, len(parts), err)
			}
			out[i] = r
			return nil
		})
	}
	err := g.Wait()
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return out, err
}

// ErrTooLarge means two partial results do not fit one reduce request
// together, so reducing cannot make progress.
var ErrTooLarge = errors.New("two partial results do not fit one reduce request")

// Group is one reduce request: consecutive items of one round.
type Group[R any] struct {
	// Round is 1 for the first round of reduce requests, 2 for the next.
	Round int
	// Index is the group's place in its round, from 0; Of is how many
	// groups the round has.
	Index, Of int
	Items     []R
}

// Reduce joins items into one, hierarchically: each round packs
// consecutive items into groups whose sizes add up to at most budget, joins
// every group of two or more with join (at most limit at a time), and
// passes a lone item on to the next round as it is. Rounds repeat until one
// item remains, so the items' order is kept throughout. size gives an
// item's size in the budget's unit; it is called once per item.
//
// One item is returned as it is, with no call; no items is an error. When
// no two neighbours fit a group together the error wraps ErrTooLarge.
func Reduce[R any](ctx context.Context, items []R, budget, limit int, size func(R) int, join func(ctx context.Context, g Group[R]) (R, error)) (R, error) {
	var zero R
	if len(items) == 0 {
		return zero, errors.New("nothing to reduce")
	}
	sizes := make([]int, len(items))
	for i, it := range items {
		sizes[i] = size(it)
	}
	for round := 1; len(items) > 1; round++ {
		groups := pack(sizes, budget)
		if len(groups) == len(items) {
			return zero, fmt.Errorf("reduce round %d: %w (%d items, budget %d)", round, ErrTooLarge, len(items), budget)
		}
		next := make([]R, len(groups))
		nextSizes := make([]int, len(groups))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(max(limit, 1))
		for k, span := range groups {
			if span[1]-span[0] == 1 {
				next[k], nextSizes[k] = items[span[0]], sizes[span[0]]
				continue
			}
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				r, err := join(gctx, Group[R]{Round: round, Index: k, Of: len(groups), Items: items[span[0]:span[1]]})
				if err != nil {
					return fmt.Errorf("reduce round %d, group %d of %d: %w", round, k+1, len(groups), err)
				}
				next[k], nextSizes[k] = r, size(r)
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return zero, err
		}
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		items, sizes = next, nextSizes
	}
	return items[0], nil
}

// pack groups consecutive sizes greedily into spans [from, to) whose sums
// stay within budget; an item over the budget on its own is a span alone.
func pack(sizes []int, budget int) [][2]int {
	var out [][2]int
	start, sum := 0, 0
	for i, n := range sizes {
		if i > start && sum+n > budget {
			out = append(out, [2]int{start, i})
			start, sum = i, 0
		}
		sum += n
	}
	if start < len(sizes) {
		out = append(out, [2]int{start, len(sizes)})
	}
	return out
}
