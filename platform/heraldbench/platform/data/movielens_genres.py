"""MovieLens's movie files as an attribute table: each movie's genres (:mod:`.attributes`).

Three layouts, recognised by content: ``u.item`` (ML-100K: ``id|title|date|video date|URL``
then 19 genre flags, ``|``-separated, Latin-1), ``movies.dat`` (ML-1M/10M:
``id::title::Genre|Genre``, Latin-1) and ``movies.csv`` (ML-20M and later: a
``movieId,title,genres`` header, quoted CSV, UTF-8). A movie's genres are a set of 1 or more
rows of the ``genre`` table: the 19 flags in their order for ``u.item``, the genre names sorted
for the others.
"""

from __future__ import annotations

import csv
import io
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from heraldbench.platform.data._vocab import open_binary
from heraldbench.platform.data.attributes import AttributeMap
from heraldbench.platform.documents import read_problem
from heraldbench.platform.exceptions import DataError, TraceFormatError

__all__ = ["GENRE_TABLE", "MovieGenres", "genre_attribute", "read_movie_genres"]

#: The attribute table's name.
GENRE_TABLE = "genre"
#: ML-100K's genres, in the order of u.item's flags (its u.genre file).
U_ITEM_GENRES = ("unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime",
                 "Documentary", "Drama", "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery",
                 "Romance", "Sci-Fi", "Thriller", "War", "Western")
#: A movie file larger than this is refused (ML-32M's movies.csv is about 4 MB).
MAX_BYTES = 64 << 20
_CSV_HEADER = "movieId,title,genres"


@dataclass(frozen=True)
class MovieGenres:
    """Each movie's genres: ``genres[movie id]`` is a tuple of rows of ``names``."""

    names: tuple[str, ...]
    genres: dict[int, tuple[int, ...]]


def read_movie_genres(path: Path) -> MovieGenres:
    """Read a MovieLens movie file (any of the three layouts); bad lines raise
    :class:`TraceFormatError` naming the file and the line, an unreadable file
    :class:`DataError`."""
    raw = _read_bounded(path).removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark
    first = raw.split(b"\n", 1)[0].decode("latin-1").strip()
    if first.replace(" ", "") == _CSV_HEADER:
        movies = _named(path, _csv_rows(path, raw))
    elif "::" in first:
        movies = _named(path, _dat_rows(raw))
    elif first.count("|") >= 5 + len(U_ITEM_GENRES) - 1:
        movies = _flagged(path, raw)
    else:
        raise TraceFormatError(path, 1, "not a MovieLens movie file: expected u.item "
                               "('id|title|...|19 genre flags'), movies.dat ('id::title::genres') "
                               f"or movies.csv (header {_CSV_HEADER!r}), got {first[:80]!r}")
    if not movies.genres:
        raise TraceFormatError(path, 1, "no movie in the movie file")
    return movies


def _read_bounded(path: Path) -> bytes:
    """The file's bytes (uncompressed), refused past :data:`MAX_BYTES`."""
    try:
        with open_binary(path) as stream:
            raw = stream.read(MAX_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:  # a truncated or corrupt gzip file too
        raise DataError(f"movie file {str(path)!r} cannot be read: {read_problem(exc)}") from None
    if len(raw) > MAX_BYTES:
        raise DataError(f"movie file {str(path)!r} is larger than {MAX_BYTES:,} bytes")
    return raw


def genre_attribute(movies: MovieGenres, item_keys: np.ndarray, path: Path) -> AttributeMap:
    """The ``genre`` attribute of the ``item`` table whose rows hold the movie ids
    ``item_keys`` (None: a row no rating reads, the missing value's)."""
    width = max(len(g) for g in movies.genres.values())
    ids = np.zeros((len(item_keys), width), np.int32)
    lengths = np.ones(len(item_keys), np.int32)  # a row no sample reads keeps genre 0
    read = np.zeros(len(item_keys), bool)
    for row, key in enumerate(item_keys):
        if key is None:
            continue
        genres = movies.genres.get(int(key))
        if genres is None:
            raise DataError(f"movie {key} is rated but not in the movie file {str(path)!r}")
        ids[row, : len(genres)] = genres
        ids[row, len(genres):] = genres[-1]
        lengths[row], read[row] = len(genres), True
    ragged = bool(read.any() and lengths[read].min() < width)  # as the rated movies read it
    return AttributeMap(GENRE_TABLE, "item", len(movies.names), ids, lengths, ragged)


def _flagged(path: Path, raw: bytes) -> MovieGenres:
    genres: dict[int, tuple[int, ...]] = {}
    count = len(U_ITEM_GENRES)
    for line_number, line in _lines(raw.decode("latin-1")):
        fields = line.split("|")
        flags = fields[-count:]
        if len(fields) < 5 + count or any(f not in ("0", "1") for f in flags):
            raise TraceFormatError(path, line_number, f"expected an id, 4 fields and {count} "
                                   "genre flags (0 or 1), '|'-separated")
        _add(genres, path, line_number, fields[0],
             tuple(i for i, flag in enumerate(flags) if flag == "1"))
    return MovieGenres(U_ITEM_GENRES, genres)


def _dat_rows(raw: bytes):
    for line_number, line in _lines(raw.decode("latin-1")):
        fields = line.split("::")
        yield line_number, fields[0] if len(fields) == 3 else None, fields[-1]


def _csv_rows(path: Path, raw: bytes):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(path, 1, f"not UTF-8 text ({exc.reason})") from None
    reader = csv.reader(io.StringIO(text))
    try:
        for fields in reader:
            if reader.line_num == 1 or not fields:
                continue
            yield reader.line_num, fields[0] if len(fields) == 3 else None, fields[-1]
    except csv.Error as exc:
        raise TraceFormatError(path, reader.line_num, f"not CSV: {exc}") from None


def _named(path: Path, rows) -> MovieGenres:
    """Movies whose genres are '|'-separated names; the names' rows are in sorted order."""
    named: dict[int, tuple[str, ...]] = {}
    for line_number, movie, text in rows:
        if movie is None:
            raise TraceFormatError(path, line_number, "expected 3 fields: id, title, genres")
        _add(named, path, line_number, movie, tuple(sorted(set(filter(None, text.split("|"))))))
    names = tuple(sorted({name for genres in named.values() for name in genres}))
    row = {name: r for r, name in enumerate(names)}
    return MovieGenres(names, {m: tuple(row[g] for g in gs) for m, gs in named.items()})


def _add(genres: dict, path: Path, line_number: int, text: str, its: tuple) -> None:
    if re.fullmatch(r"[0-9]{1,18}", text.strip()) is None:
        raise TraceFormatError(path, line_number, f"movie id {text[:20]!r} is not an integer")
    movie = int(text)  # as the ratings name it: 7 and 007 are one movie
    if not its:
        raise TraceFormatError(path, line_number, f"movie {movie} has no genre")
    if movie in genres:
        raise TraceFormatError(path, line_number, f"movie {movie} is listed twice")
    genres[movie] = its


def _lines(text: str):
    """Numbered non-blank lines, split at line feeds only (Latin-1 titles may hold \\x85)."""
    for line_number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield line_number, line.rstrip("\r")
