"""An incremental ``text/event-stream`` decoder (WHATWG HTML, "event stream interpretation").

httpx-sse decodes events but hides comment lines, so a reader blocked on a quiet stream cannot
notice its own deadline while the service sends only heartbeats (``: ping``). This decoder is
fed raw text chunks, so the caller regains control on every chunk, heartbeats included, and
yields httpx-sse's :class:`~httpx_sse.ServerSentEvent` objects.
"""

from __future__ import annotations

from httpx_sse import ServerSentEvent

__all__ = ["EventStreamDecoder"]


class EventStreamDecoder:
    """Feed text chunks, get the complete events they finish.

    Lines end at CRLF, LF or CR (a CR at the end of a chunk waits for the next one); a blank
    line dispatches the event when it has data; ``id`` persists across events as the spec says.

    >>> decoder = EventStreamDecoder()
    >>> decoder.feed(": ping\\n\\nevent: fee\\nid: 3\\ndata: {}\\n")
    []
    >>> [(e.event, e.id, e.data) for e in decoder.feed("\\n")]
    [('fee', '3', '{}')]
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._first = True
        self._event = ""
        self._data: list[str] = []
        self._last_id = ""
        self._retry: int | None = None

    def feed(self, text: str) -> list[ServerSentEvent]:
        """Decode ``text`` (any slice of the stream) and return the events it completes."""
        if self._first and text:
            self._first = False
            text = text.removeprefix("\ufeff")
        self._buffer += text
        events: list[ServerSentEvent] = []
        while True:
            cut = self._line_end()
            if cut is None:
                return events
            end, width = cut
            line = self._buffer[:end]
            self._buffer = self._buffer[end + width :]
            event = self._line(line)
            if event is not None:
                events.append(event)

    def _line_end(self) -> tuple[int, int] | None:
        buffer = self._buffer
        for index, char in enumerate(buffer):
            if char == "\n":
                return index, 1
            if char == "\r":
                if index + 1 < len(buffer):
                    return index, 2 if buffer[index + 1] == "\n" else 1
                return None  # a CR at the end: maybe the first half of CRLF
        return None

    def _line(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        data, event, retry = self._data, self._event, self._retry
        self._data, self._event, self._retry = [], "", None
        if not data:
            return None
        return ServerSentEvent(
            event=event or "message", data="\n".join(data), id=self._last_id, retry=retry
        )
