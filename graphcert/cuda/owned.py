"""Driver handles graphcert owns, and references to handles it only borrows.

An owned handle (a graph, an exec, a stream, an event, a module, a buffer) is freed exactly
once, by its class's one destroy call, on destroy() or on leaving a `with` block; destroy()
again does nothing. A borrowed reference (a framework's graph or stream, a conditional body
its parent graph owns) is a type of its own, as cuda.core's `create_graph_handle_ref` is:
its destroy() forgets the handle and frees nothing, so no caller has to remember to set a
handle to None before a borrowed object goes out of scope. No driver call here.
"""

from __future__ import annotations

from typing import Any, TypeVar

_O = TypeVar("_O", bound="Owned")


class Owned:
    """A handle freed once by `_free`, the subclass's destroy function."""

    handle: Any

    def _free(self, handle: Any) -> None:
        """The one driver call that frees `handle` (and what must go with it)."""
        raise NotImplementedError

    def destroy(self) -> None:
        """Free the handle; a second call, or one after the handle is gone, does nothing."""
        if self.handle is not None:
            handle, self.handle = self.handle, None
            self._free(handle)

    def __enter__(self: _O) -> _O:
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()


class Borrowed:
    """Put first in a borrowed type's bases (`class GraphRef(Borrowed, Graph)`): the owned
    type's methods, with a destroy() that only forgets the handle."""

    def _free(self, handle: Any) -> None:
        """Someone else owns `handle` and frees it."""
