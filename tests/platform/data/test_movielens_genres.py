"""MovieLens's movie files read as each rated movie's genres (a ragged ``genre`` table)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from pydantic import ValidationError

from heraldbench.platform.data import movielens_genres
from heraldbench.platform.data.movielens import MovieLensSpec
from heraldbench.platform.data.movielens_genres import U_ITEM_GENRES, read_movie_genres
from heraldbench.platform.exceptions import DataError, TraceFormatError

FLAGS = len(U_ITEM_GENRES)


def _u_item(path: Path, genres: dict[int, list[int]]) -> Path:
    lines = []
    for movie, its in genres.items():
        flags = ["1" if g in its else "0" for g in range(FLAGS)]
        lines.append("|".join([str(movie), f"Film {movie} (1995)", "01-Jan-1995", "",
                               "http://example.org/x", *flags]))
    path.write_text("\n".join(lines) + "\n", encoding="latin-1")
    return path


def _ratings(path: Path, rows: list[tuple[int, int, int]]) -> Path:
    path.write_text("".join(f"{u}\t{m}\t4\t{t}\n" for u, m, t in rows))
    return path


def test_each_sample_reads_its_movies_genres(tmp_path: Path) -> None:
    items = _u_item(tmp_path / "u.item", {10: [1, 8], 20: [5], 30: [2, 3, 16]})
    ratings = _ratings(tmp_path / "u.data", [(1, 20, 3), (2, 10, 1), (1, 30, 2), (3, 10, 4)])
    trace = MovieLensSpec(path=ratings, items=items, sort_by_time=True).open()
    assert trace.layout.names == ("user", "item", "genre")
    assert trace.layout.sizes[-1] == FLAGS and trace.layout.table_widths[-1] == 3
    whole = trace.materialize()
    genre0 = int(trace.layout.offsets[2])
    read = [sorted(set((whole.ids[i, 2:2 + whole.lengths[i, 2]] - genre0).tolist()))
            for i in range(4)]
    assert read == [[1, 8], [2, 3, 16], [5], [1, 8]]  # in time order: t = 1, 2, 3, 4
    assert trace.describe()["attributes"] == [
        {"name": "genre", "parent": "item", "rows": FLAGS, "width": 3}]


def test_movies_dat_and_csv_name_their_genres(tmp_path: Path) -> None:
    dat = tmp_path / "movies.dat"
    dat.write_text("1::Toy Story (1995)::Animation|Children's|Comedy\n2::Heat (1995)::Action\n",
                   encoding="latin-1")
    csv = tmp_path / "movies.csv"
    csv.write_text('movieId,title,genres\n1,"Toy Story, The (1995)",Animation|Comedy\n'
                   "2,Heat (1995),(no genres listed)\n")
    from_dat, from_csv = read_movie_genres(dat), read_movie_genres(csv)
    assert from_dat.names == ("Action", "Animation", "Children's", "Comedy")
    assert from_dat.genres == {1: (1, 2, 3), 2: (0,)}
    assert from_csv.names == ("(no genres listed)", "Animation", "Comedy")
    assert from_csv.genres == {1: (1, 2), 2: (0,)}
    packed = tmp_path / "movies.dat.gz"
    packed.write_bytes(gzip.compress(dat.read_bytes()))
    assert read_movie_genres(packed) == from_dat


@pytest.mark.parametrize(("text", "line", "reason"), [
    ("1|a|b|c|d|" + "|".join("0" * FLAGS) + "\n", 1, "movie 1 has no genre"),
    ("1|a|b|c|d|" + "|".join("2" * FLAGS) + "\n", 1, "genre flags"),
    ("1::A::Drama\n1::B::Comedy\n", 2, "movie 1 is listed twice"),
    ("x::A::Drama\n", 1, "is not an integer"),
    ("1::A\n", 1, "expected 3 fields"),
    ("hello\n", 1, "not a MovieLens movie file"),
])
def test_a_bad_movie_file_is_refused_at_its_line(tmp_path: Path, text: str, line: int,
                                                 reason: str) -> None:  # fmt: skip
    path = tmp_path / "movies"
    path.write_text(text)
    with pytest.raises(TraceFormatError, match=reason) as caught:
        read_movie_genres(path)
    assert caught.value.line == line


def test_a_rated_movie_missing_from_the_movie_file_is_named(tmp_path: Path) -> None:
    items = _u_item(tmp_path / "u.item", {10: [1]})
    ratings = _ratings(tmp_path / "u.data", [(1, 10, 1), (2, 99, 2)])
    with pytest.raises(DataError, match="movie 99 is rated but not in the movie file"):
        MovieLensSpec(path=ratings, items=items).open()


def test_a_movie_file_over_the_limit_is_refused(tmp_path: Path, monkeypatch) -> None:
    items = _u_item(tmp_path / "u.item", {m: [1] for m in range(1, 50)})
    monkeypatch.setattr(movielens_genres, "MAX_BYTES", 100)
    with pytest.raises(DataError, match="larger than"):
        read_movie_genres(items)


def test_genres_need_every_movie_its_own_row(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="items needs frequency_threshold 0 or 1, got 3"):
        MovieLensSpec(path=tmp_path / "u.data", items=tmp_path / "u.item", frequency_threshold=3)


def test_a_spec_without_items_serialises_as_before(tmp_path: Path) -> None:
    spec = MovieLensSpec(path=tmp_path / "u.data")
    assert "items" not in spec.model_dump(mode="json")
    with_items = MovieLensSpec(path=tmp_path / "u.data", items=tmp_path / "u.item")
    assert with_items.model_dump(mode="json")["items"] == str(tmp_path / "u.item")


@pytest.mark.parametrize(("content", "message"), [
    (b"movieId,title,genres\n", "no movie in the movie file"),
    (gzip.compress(b"1::A::Drama\n" * 50)[:-12], "cannot be read"),  # truncated
    (b"\x1f\x8b" + b"not gzip at all" * 4, "cannot be read"),
    (b'movieId,title,genres\n1,"' + b"x" * 200_000 + b'",Drama\n', "not CSV"),
])
def test_an_unreadable_movie_file_is_an_error_naming_it(tmp_path: Path, content: bytes,
                                                        message: str) -> None:  # fmt: skip
    path = tmp_path / "movies"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message) as caught:
        read_movie_genres(path)
    assert str(path) in str(caught.value)


def test_movie_ids_are_numbers_and_titles_may_hold_any_latin_1_byte(tmp_path: Path) -> None:
    dat = tmp_path / "movies.dat"
    dat.write_bytes("007::Caf\x85 Society (1995)::Drama\n2::B::Comedy|Drama\n".encode("latin-1"))
    assert read_movie_genres(dat).genres == {7: (1,), 2: (0, 1)}
    ratings = _ratings(tmp_path / "u.data", [(1, 7, 1), (2, 2, 2)])
    trace = MovieLensSpec(path=ratings, items=dat).open()
    assert trace.materialize().lengths[:, -1].tolist() == [1, 2]


def test_a_movie_file_whose_rated_movies_all_have_two_genres_is_not_ragged(tmp_path) -> None:
    """The missing value's row, which no rating reads, does not make the table ragged."""
    items = _u_item(tmp_path / "u.item", {10: [1, 8], 20: [5, 6]})
    ratings = _ratings(tmp_path / "u.data", [(1, 20, 3), (2, 10, 1)])
    trace = MovieLensSpec(path=ratings, items=items).open()
    assert not trace.layout.is_ragged and trace.materialize().lengths is None


def test_a_spec_naming_the_genre_table_or_a_missing_movie_file_is_refused(tmp_path) -> None:
    from heraldbench.platform.exceptions import SpecError
    from heraldbench.platform.limits import dataset_facts

    ratings = _ratings(tmp_path / "u.data", [(1, 10, 1)])
    items = _u_item(tmp_path / "u.item", {10: [1, 2]})
    with pytest.raises(SpecError, match="dataset.items: .*u.nothing"):
        dataset_facts(MovieLensSpec(path=ratings, items=tmp_path / "u.nothing"))
    refused = [({"sequence": {"user": "user", "item": "item", "length": 2, "name": "genre"}},
                "sequence.name 'genre' is already a table"),
               ({"multi_hot": {"sizes": {"genre": 2}}}, "'genre' is an attribute table")]
    for features, message in refused:
        with pytest.raises(SpecError, match=message):
            dataset_facts(MovieLensSpec(path=ratings, items=items, features=features))
