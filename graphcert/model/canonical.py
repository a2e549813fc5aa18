"""Canonical node order of a labelled DAG: the same order for the same work, whatever the driver's
node order or ids. Pure algorithm over integer node ids; snapshot.py supplies the labels.

The order is a Kahn topological order. At each step the ready nodes with the smallest key are
the candidates. The key is (sorted canonical indices of the node's predecessors, its topology
label, a refined hash of its whole upstream and downstream neighbourhood, and for each successor
the earliest position among that successor's already placed predecessors). The last part is
what tells parallel look-alikes apart by what they share sideways (multi-stream halos,
butterflies). Usually one candidate remains. When several do they may still not be
interchangeable, so instead of picking one arbitrarily we search: the canonical order is the
candidate order with the lexicographically smallest encoding. That minimum is an invariant of
the labelled graph, which is what makes the fingerprints stable.

Phases, so that shape never moves topology:
1. minimise the topology encoding (topology label + predecessor indices per position); the
   topology fingerprint is taken over it, so a new grid cannot reorder nodes in a way that
   changes the topology fingerprint;
2. among the orders that reach that same topology encoding, minimise the shape encoding, so
   equal topology means position i of one snapshot corresponds to position i of the other, and
   equal shape means identical fingerprints;
3. among those, minimise the values (never hashed), so the whole snapshot is identical too.
A phase whose every step had one candidate ends the sequence: nothing is left to reorder.

The search stays small in practice: twins (same labels, same predecessors, same successors)
are interchangeable and placed as one class; a branch whose prefix already encodes worse than
the best leaf is cut; and a branch is skipped when an automorphism fixing the prefix maps it
onto one already searched. Automorphisms come for free: two leaves that encode alike exhibit
one (a greedy probe leaf per branch finds them early). Cut nodes (every other node is before or
after them, like the join of a fork-join) split the search into segments searched one after
another, so a long graph costs the sum of its segments, not their product. A work budget bounds
pathological inputs: past it the search goes greedy, still deterministic for a given input,
but no longer provably independent of the driver's node order; `canonical_order` then reports
exact=False.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Sequence
from typing import Any, NamedTuple

# Past this many placements a search stops branching (see module docstring).
WORK_BUDGET = 200_000
# Nested branch points deeper than this are decided greedily (keeps Python's stack safe).
MAX_BRANCH_DEPTH = 200
# Cap on remembered automorphisms (total moved nodes); they only speed the search up.
MAX_STORED_MOVES = 1_000_000

_Key = tuple[tuple[int, ...], str, str]


def _h(*parts: str) -> str:
    # sha256, not hash(): keys must order the same in every process and on every machine.
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def find_cycle_nodes(n: int, succs: Sequence[Sequence[int]]) -> list[int]:
    """Nodes left over by Kahn's algorithm (on or behind a cycle); empty for a DAG."""
    indeg = [0] * n
    for out in succs:
        for s in out:
            indeg[s] += 1
    ready = [v for v in range(n) if indeg[v] == 0]
    seen = 0
    while ready:
        v = ready.pop()
        seen += 1
        for s in succs[v]:
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    return [v for v in range(n) if indeg[v] > 0] if seen < n else []


def _any_topo_order(n: int, preds: Sequence[Sequence[int]], succs: Sequence[Sequence[int]]
                    ) -> list[int]:
    indeg = [len(p) for p in preds]
    ready = [v for v in range(n) if indeg[v] == 0]
    order: list[int] = []
    while ready:
        v = ready.pop()
        order.append(v)
        for s in succs[v]:
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    return order


def refined_labels(preds: Sequence[Sequence[int]], succs: Sequence[Sequence[int]],
                   labels: Sequence[str]) -> list[str]:
    """An isomorphism-invariant hash per node: its label, everything upstream, everything
    downstream (the "downstream hash"), then one round over its direct neighbours."""
    n = len(labels)
    order = _any_topo_order(n, preds, succs)
    up = [""] * n
    for v in order:
        up[v] = _h("u", labels[v], *sorted(up[p] for p in preds[v]))
    down = [""] * n
    for v in reversed(order):
        down[v] = _h("d", labels[v], *sorted(down[s] for s in succs[v]))
    r0 = [up[v] + down[v] for v in range(n)]
    return [
        _h(r0[v], "p", *sorted(r0[p] for p in preds[v]), "s", *sorted(r0[s] for s in succs[v]))
        for v in range(n)
    ]


# Heap entry: (key, sideways key, later-phase labels or "" in phase 1, twin class, node,
# version). Entries of one twin class sit next to each other, and the heap's minimum is the
# greedy choice. A node's sideways key changes while it waits; a newer entry (version) then
# supersedes the old one, which is skipped when it surfaces.
_Side = tuple[tuple[int, str], ...]
_Entry = tuple[_Key, _Side, str, int, int, int]

# Undo log records: which array, which node, the value before.
_POS, _INDEG, _FIRST, _VERSION = range(4)


class _State:
    """The one search state. Branches are tried in turn and undone (log), not copied: a
    copy costs O(n) and a 10,000-node graph can have thousands of branch points."""

    def __init__(self, n: int, preds: Sequence[Sequence[int]]):
        self.order: list[int] = []
        self.enc: list[Any] = []
        self.pos = [-1] * n  # canonical position, -1 while unplaced
        self.indeg = [len(p) for p in preds]  # predecessors not yet placed
        self.first = [-1] * n  # position of a node's first placed predecessor, -1 while none
        self.version = [0] * n
        self.heap: list[_Entry] = []
        self.log: list[tuple[int, int, int]] = []
        self.arrays = (self.pos, self.indeg, self.first, self.version)

    def mark(self) -> tuple[int, int, list[_Entry]]:
        return len(self.log), len(self.order), self.heap[:]

    def undo(self, mark: tuple[int, int, list[_Entry]]) -> None:
        log_len, placed, heap = mark
        arrays, log = self.arrays, self.log
        while len(log) > log_len:
            which, v, old = log.pop()
            arrays[which][v] = old
        del self.order[placed:], self.enc[placed:]
        self.heap = heap


class _Search:
    """One phase of the minimum-encoding search (see the module docstring)."""

    def __init__(self, preds: Sequence[Sequence[int]], succs: Sequence[Sequence[int]],
                 tsig: Sequence[str], refined: Sequence[str], labels: list[Sequence[str]],
                 target: list[tuple[Any, ...]] | None):
        self.n = len(tsig)
        self.preds = preds
        self.succs = succs
        self.tsig = tsig
        self.refined = refined
        # Labels of the later phases, this phase's last; phase 1 (none) ignores shape
        # entirely, even when ordering its exploration.
        self.labels = labels
        self.slot = ["\x00".join(lab[v] for lab in labels) for v in range(self.n)]
        # Per position, the elements of the earlier phases every leaf must reproduce.
        self.target = target
        # The best leaf of the segment being searched: its nodes and encoding from `start`.
        self.start = 0
        self.boundary = self.n  # the segment ends at this position
        self.best_enc: list[Any] | None = None
        self.best_order: list[int] | None = None
        self.order: list[int] = []  # the result of run()
        self.best_serial = 0  # bumped whenever the best leaf changes
        self.work = 0
        self.branches = 0  # branch points met in the current segment
        self.exhausted = False
        # True while every step had a single candidate: then no later phase can reorder.
        self.forced = True
        # (node -> image for the moved nodes, best_serial of the best leaf it was seen with)
        self.automorphisms: list[tuple[dict[int, int], int]] = []
        self.stored = 0
        # Twins are interchangeable: same labels, same predecessors, same successors.
        classes: dict[Any, int] = {}
        self.twin: list[int] = []
        for v in range(self.n):
            tk = (tsig[v], self.slot[v], frozenset(preds[v]), frozenset(succs[v]))
            self.twin.append(classes.setdefault(tk, len(classes)))

    def _entry(self, st: _State, v: int) -> _Entry:
        pos, first, n = st.pos, st.first, self.n
        key = (tuple(sorted(pos[q] for q in self.preds[v])), self.tsig[v], self.refined[v])
        side = tuple(sorted((first[s] if first[s] >= 0 else n, self.refined[s])
                            for s in self.succs[v]))
        return (key, side, self.slot[v], self.twin[v], v, st.version[v])

    def _push(self, st: _State, v: int) -> None:
        st.log.append((_VERSION, v, st.version[v]))
        st.version[v] += 1
        heapq.heappush(st.heap, self._entry(st, v))

    def _clean(self, st: _State) -> None:
        """Drop superseded entries from the top of the heap."""
        heap = st.heap
        while heap and (st.pos[heap[0][4]] >= 0 or st.version[heap[0][4]] != heap[0][5]):
            heapq.heappop(heap)

    def elem(self, v: int, p: int, preds_key: tuple[int, ...]) -> Any:
        """The encoding element of node v at position p; None if this phase forbids it there."""
        topo = (self.tsig[v], preds_key)
        if not self.labels or self.target is None:
            return topo
        if (topo, *(lab[v] for lab in self.labels[:-1])) != self.target[p]:
            return None
        return self.labels[-1][v]

    def _best_at(self, p: int) -> Any:
        assert self.best_enc is not None
        return self.best_enc[p - self.start]

    def run(self, cuts: Sequence[int] = ()) -> list[Any] | None:
        """The smallest encoding, position by position; None if a later phase found no order
        at all (only possible once the work budget forced greedy choices). The order itself
        is left in self.order.

        cuts: positions of cut nodes (see cut_positions). The search runs one segment at a
        time: everything before a cut node is placed before it in every order, and nothing
        after it depends on how, so each segment's minimum extends the previous one."""
        st = _State(self.n, self.preds)
        for v in range(self.n):
            if st.indeg[v] == 0:
                self._push(st, v)
        for boundary in sorted({c + 1 for c in cuts} | {self.n}):
            self.start, self.boundary = len(st.order), boundary
            self.best_enc = self.best_order = None
            self.automorphisms, self.stored = [], 0  # they fixed the previous segment only
            mark = st.mark()
            self._advance(st, False, False, 0)
            if self.best_order is None:
                return None
            if self.branches:
                # st is wherever the search ended: go back and replay the best leaf. (With
                # no branch point there was one path, and st is at its leaf already.)
                st.undo(mark)
                for v in self.best_order:
                    self._place(st, v, tuple(sorted(st.pos[q] for q in self.preds[v])), False)
                # The replay left entries of nodes it placed; drop them before the heap is
                # copied at every branch of the next segment.
                st.heap = [e for e in st.heap if st.pos[e[4]] < 0 and st.version[e[4]] == e[5]]
                heapq.heapify(st.heap)
            self.branches = 0
            st.log.clear()  # never undone past here
        self.order = st.order
        return st.enc

    def _place(self, st: _State, v: int, preds_key: tuple[int, ...], eq: bool
               ) -> tuple[bool, bool]:
        """Put v next; (False, _) when that prefix cannot beat the best leaf."""
        p = len(st.order)
        e = self.elem(v, p, preds_key)
        if e is None:
            return False, eq
        if eq and self.best_enc is not None:
            b = self._best_at(p)
            if e > b:
                return False, eq
            if e < b:
                eq = False
        self.work += 1
        log, pos, first, indeg = st.log, st.pos, st.first, st.indeg
        st.order.append(v)
        st.enc.append(e)
        log.append((_POS, v, -1))
        pos[v] = p
        for s in self.succs[v]:
            if first[s] < 0:
                log.append((_FIRST, s, -1))
                first[s] = p
                # s's other waiting predecessors now share something with position p.
                for u in self.preds[s]:
                    if pos[u] < 0 and indeg[u] == 0:
                        self._push(st, u)
            log.append((_INDEG, s, indeg[s]))
            indeg[s] -= 1
            if indeg[s] == 0:
                self._push(st, s)
        return True, eq

    def _place_group(self, st: _State, group: list[_Entry], rest: list[_Entry], eq: bool
                     ) -> tuple[bool, bool]:
        # Placing one twin readies nothing (its twins share its successors), so the whole
        # class goes in one after another; finishing a class once begun is itself invariant.
        for item in rest:
            heapq.heappush(st.heap, item)
        for item in group:
            ok, eq = self._place(st, item[4], item[0][0], eq)
            if not ok:
                return False, eq
        return True, eq

    def _advance(self, st: _State, eq: bool, greedy: bool, depth: int) -> tuple[bool, bool]:
        """Complete the segment from `st` (which it changes; the caller undoes). eq: st's
        prefix encodes exactly like the best leaf's.

        Returns (whether the best leaf changed, whether a leaf was reached at all)."""
        while len(st.order) < self.boundary:
            self._clean(st)
            heap = st.heap
            first = heapq.heappop(heap)  # a DAG always has a ready node until the end
            tie, twin = first[:2], first[3]
            group = [first]
            self._clean(st)
            while heap and heap[0][:2] == tie and heap[0][3] == twin:
                group.append(heapq.heappop(heap))
                self._clean(st)
            tied = bool(heap) and heap[0][:2] == tie
            if tied or len(group) > 1:
                self.forced = False
            if tied and not greedy and (self.work > WORK_BUDGET or depth >= MAX_BRANCH_DEPTH):
                self.exhausted = True  # from here on ties are decided, not searched
            if not tied or greedy or self.exhausted:
                ok, eq = self._place_group(st, group, [], eq)
                if not ok:
                    return False, False
                continue
            groups = [group]
            while heap and heap[0][:2] == tie:
                item = heapq.heappop(heap)
                if item[3] != groups[-1][0][3]:
                    groups.append([])
                groups[-1].append(item)
                self._clean(st)
            return self._branch(st, groups, eq, depth), False
        tail = st.order[self.start:]
        if self.best_enc is None or not eq or self.best_order is None:
            self.best_enc, self.best_order = st.enc[self.start:], tail
            self.best_serial += 1
            return True, True
        self._record_automorphism(self.best_order, tail)
        return False, True

    def _record_automorphism(self, a: list[int], b: list[int]) -> None:
        """Two leaves that encode alike: position-wise a[i] -> b[i] is an automorphism
        (both extend the same nodes before the segment and leave the same ones after it)."""
        if self.stored >= MAX_STORED_MOVES:
            return
        moved = {x: y for x, y in zip(a, b, strict=True) if x != y}
        if moved:
            self.automorphisms.append((moved, self.best_serial))
            self.stored += len(moved)

    def _branch(self, st: _State, groups: list[list[_Entry]], eq: bool, depth: int) -> bool:
        """Try each tied twin class next; keep the smallest leaf. True if the best changed."""
        self.branches += 1
        p = len(st.order)
        updated = False
        done: list[int] = []  # a member of each class searched (or shown equivalent)
        # Orbits under the automorphisms that fix this prefix, kept up to date as the
        # search below finds more. One found between two leaves that both lie below this
        # point fixes the prefix for sure (the best leaf lies below once it was set here).
        entry_serial = self.best_serial
        next_aut = len(self.automorphisms)
        parent: dict[int, int] = {}
        candidates = {item[4] for g in groups for item in g}

        def find(x: int) -> int:
            root = x
            while parent.get(root, root) != root:
                root = parent[root]
            while parent.get(x, x) != root:
                parent[x], x = root, parent[x]
            return root

        for i, group in enumerate(groups):
            head = group[0]
            if eq and self.best_enc is not None:
                # Cut without placing anything: the class's first element decides.
                e = self.elem(head[4], p, head[0][0])
                if e is None or e > self._best_at(p):
                    continue
            if done:
                for moved, serial in self.automorphisms[next_aut:]:
                    if serial > entry_serial or all(st.pos[m] < 0 for m in moved):
                        # It fixes the prefix, so it maps these candidates among themselves:
                        # their orbits need only the moves of candidates.
                        for x in candidates.intersection(moved):
                            rx, ry = find(x), find(moved[x])
                            if rx != ry:
                                parent[max(rx, ry)] = min(rx, ry)
                next_aut = len(self.automorphisms)
                # An automorphism fixing the prefix maps this class onto one already searched,
                # so its subtree holds the same encodings: nothing new below it.
                root = find(head[4])
                if any(find(x) == root for x in done):
                    continue
            done.append(head[4])
            mark = st.mark()
            rest = [item for j, g in enumerate(groups) if j != i for item in g]
            ok, child_eq = self._place_group(st, group, rest, eq)
            if ok and i > 0 and eq and child_eq and self.best_enc is not None:
                # One greedy leaf first: if it encodes like the best, an automorphism maps
                # this class onto a searched one (now recorded), and the subtree can go.
                probe = st.mark()
                probe_updated, reached = self._advance(st, child_eq, True, depth + 1)
                st.undo(probe)
                if probe_updated:
                    updated = eq = child_eq = True
                elif reached:
                    st.undo(mark)
                    continue
            if ok and self._advance(st, child_eq, False, depth + 1)[0]:
                # The new best leaf lies below here, so this prefix now equals the best's.
                updated = eq = True
            st.undo(mark)
        return updated


def cut_positions(preds: Sequence[Sequence[int]], succs: Sequence[Sequence[int]]) -> list[int]:
    """Positions of the cut nodes: a node every other node is an ancestor or a descendant of,
    with no edge from an ancestor to a descendant passing it by. Every topological order puts
    a cut node at the same position, after the same nodes (a chain of fork-joins has one cut
    per join), which lets the search run segment by segment."""
    n = len(preds)
    order = _any_topo_order(n, preds, succs)
    pos = [0] * n
    for p, v in enumerate(order):
        pos[v] = p
    skipped = [0] * (n + 1)  # edges (u, v) pass over the positions strictly between them
    for u in range(n):
        for v in succs[u]:
            if pos[v] > pos[u] + 1:
                skipped[pos[u] + 1] += 1
                skipped[pos[v]] -= 1
    sinks_before = 0
    sources_after = sum(1 for v in range(n) if not preds[v])
    cuts = []
    passing = 0
    for p, v in enumerate(order):
        passing += skipped[p]
        if not preds[v]:
            sources_after -= 1
        # v is a cut: nothing passes it, everything before leads on (no sinks), everything
        # after comes from somewhere (no sources), so all of them reach v or come from it.
        if passing == 0 and sinks_before == 0 and sources_after == 0:
            cuts.append(p)
        if not succs[v]:
            sinks_before += 1
    return cuts


class CanonicalOrder(NamedTuple):
    """order[position] = node id; exact is False when the work budget cut the search."""

    order: list[int]
    exact: bool


def canonical_order(preds: Sequence[Sequence[int]], succs: Sequence[Sequence[int]],
                    topo_labels: Sequence[str], shape_labels: Sequence[str],
                    value_labels: Sequence[str] | None = None) -> CanonicalOrder:
    """Canonical position -> node id for a DAG whose nodes carry topology, shape and
    (optionally) value labels, minimised in that priority (see the module docstring).

    The caller guarantees a DAG (see find_cycle_nodes). Labels are compared as strings, so
    they must be deterministic across processes (hex digests, canonical JSON)."""
    n = len(topo_labels)
    if n == 0:
        return CanonicalOrder([], True)
    refined = refined_labels(preds, succs, topo_labels)
    cuts = cut_positions(preds, succs)
    phases: list[list[Sequence[str]]] = [[], [shape_labels]]
    # Values never reach a fingerprint, but ordering by them too makes the whole snapshot,
    # not just its fingerprints, independent of the driver's node order.
    if value_labels is not None and len(set(value_labels)) > 1:
        phases.append([shape_labels, value_labels])
    order: list[int] | None = None
    target: list[tuple[Any, ...]] = [()] * n
    exact = True
    for labels in phases:
        search = _Search(preds, succs, topo_labels, refined, labels, target if labels else None)
        enc = search.run(cuts)
        exact = exact and not search.exhausted
        if enc is None:
            # Only past the work budget: keep the previous phase's order, right so far.
            break
        order = search.order
        if search.forced:
            break  # one candidate at every step: later labels have nothing left to order
        target = [t + (e,) for t, e in zip(target, enc, strict=True)]
    assert order is not None and len(order) == n  # phase 1 always completes on a DAG
    return CanonicalOrder(order, exact)


__all__ = ["CanonicalOrder", "canonical_order", "cut_positions", "find_cycle_nodes",
           "refined_labels"]
