"""Where the store is: ``$LEGAL_JUDGE_STORE``, else ``[store] url`` in ``./legal-judge.toml``, else
the default (issue 35: "or ``[store] url = …`` in a project file").

The project file is committed with the project, so a password in it is refused; so is any key or
section legal-judge does not know (a typo would otherwise silently leave the team on a local store).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from legal_judge.config import PROJECT_FILENAME, store_address, store_setting, store_target
from legal_judge.errors import ConfigError, InputError, StoreError
from legal_judge.store import Store


@pytest.fixture(autouse=True)
def _no_store_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    # The file is read only when the variable is unset (the PostgreSQL test backend sets it).
    monkeypatch.delenv("LEGAL_JUDGE_STORE", raising=False)


def _project(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / PROJECT_FILENAME
    path.write_text(text, "utf-8")
    return path


def test_without_a_setting_the_store_is_the_default_and_says_so(tmp_path: Path) -> None:
    setting = store_setting(tmp_path)
    assert setting.target == tmp_path / "lj-home" / "store.sqlite3"
    assert setting.origin == "default"
    assert setting.describe() == f"{tmp_path / 'lj-home' / 'store.sqlite3'} (from default)"


def test_the_project_file_names_a_sqlite_store_relative_to_its_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    path = _project(project, '[store]\nurl = "team/shared.sqlite3"\n')
    monkeypatch.chdir(tmp_path)  # elsewhere: the file's folder, not the process's, anchors it
    setting = store_setting(project)
    assert setting.target == project / "team" / "shared.sqlite3"
    assert setting.origin == f"{path} [store] url"


def test_the_project_file_names_a_postgresql_store(tmp_path: Path) -> None:
    path = _project(tmp_path, '[store]\nurl = "postgresql://judge@db.internal/legal_judge"\n')
    setting = store_setting(tmp_path)
    assert setting.target == "postgresql://judge@db.internal/legal_judge"
    assert setting.describe() == (f"postgresql://judge@db.internal/legal_judge "
                                  f"(from {path} [store] url)")


def test_the_environment_wins_over_the_project_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path, '[store]\nurl = "from-file.sqlite3"\n')
    monkeypatch.setenv("LEGAL_JUDGE_STORE", str(tmp_path / "from-env.sqlite3"))
    setting = store_setting(tmp_path)
    assert setting.target == tmp_path / "from-env.sqlite3"
    assert setting.origin == "LEGAL_JUDGE_STORE"


def test_a_project_file_in_a_parent_folder_is_not_used(tmp_path: Path) -> None:
    _project(tmp_path, '[store]\nurl = "parent.sqlite3"\n')
    below = tmp_path / "sub"
    below.mkdir()
    assert store_setting(below).origin == "default"  # the same rule as legal-judge.policy.toml


def test_a_file_without_a_store_section_keeps_the_default(tmp_path: Path) -> None:
    _project(tmp_path, "# nothing set yet\n")
    assert store_setting(tmp_path).origin == "default"


@pytest.mark.parametrize("url", [
    "postgresql://judge:s3cret@db.internal/legal_judge",
    "postgres://judge:s3cret@db.internal:5433/legal_judge?sslmode=require",
    "postgresql://judge@db.internal/legal_judge?sslmode=require&password=s3cret",
])
def test_a_password_in_the_project_file_is_refused_naming_file_line_and_fix(
        tmp_path: Path, url: str) -> None:
    path = _project(tmp_path, f'# the team store\n[store]\nurl = "{url}"\n')
    with pytest.raises(InputError) as caught:
        store_setting(tmp_path)
    error = caught.value
    assert isinstance(error, ConfigError) and error.exit_code == 2
    text = str(error)
    assert f"{path}:3: field '[store] url': holds a password" in text
    assert "s3cret" not in text and "***" in text
    assert error.fix is not None and "PGPASSWORD" in error.fix and "~/.pgpass" in error.fix


def test_a_password_in_the_environment_is_the_user_s_own_and_masked_when_printed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEGAL_JUDGE_STORE", "postgresql://judge:s3cret@db.internal/lj")
    assert store_target() == "postgresql://judge:s3cret@db.internal/lj"
    assert store_address() == "postgresql://judge:***@db.internal/lj"


def test_unknown_sections_and_keys_are_refused_naming_each_with_its_line(tmp_path: Path) -> None:
    path = _project(tmp_path, '[stor]\nurl = "a.sqlite3"\n\n[store]\nulr = "b.sqlite3"\n')
    with pytest.raises(InputError) as caught:
        store_setting(tmp_path)
    text = str(caught.value)
    assert f"{path}:1: field 'stor': unknown section [stor] (known: [store])" in text
    assert f"{path}:5: field 'store.ulr': unknown key 'ulr' in [store] (known: url)" in text
    assert len(caught.value.problems) == 2


@pytest.mark.parametrize("text", ['[store]\nurl = 3\n', '[store]\nurl = "  "\n'])
def test_a_url_that_is_not_a_string_is_refused(tmp_path: Path, text: str) -> None:
    path = _project(tmp_path, text)
    with pytest.raises(InputError, match="must be a non-empty string") as caught:
        store_setting(tmp_path)
    assert f"{path}:2: field '[store] url'" in str(caught.value)


#: URLs of other schemes, each once a new empty SQLite store in a folder named after the scheme.
OTHER_SCHEMES = ["mysql://judge:s3cret@db.internal/lj", "postgresql+psycopg://judge@db/lj",
                 "sqlite:///var/lj/store.sqlite3"]


@pytest.mark.parametrize("url", OTHER_SCHEMES)
def test_a_url_of_another_scheme_is_refused_not_made_a_new_sqlite_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    # Defect: read as a file path, `mysql://...` opened a new empty store in ./mysql:/ (exit 0,
    # "no runs yet"): a typo left a runner on its own store, and printed the password.
    path = _project(tmp_path, f'[store]\nurl = "{url}"\n')
    with pytest.raises(InputError) as caught:
        store_setting(tmp_path)
    text = str(caught.value)
    assert f"{path}:2: field '[store] url':" in text and "a store is a postgresql:// URL" in text
    assert "s3cret" not in text
    monkeypatch.setenv("LEGAL_JUDGE_STORE", url)
    with pytest.raises(ConfigError) as env:
        store_setting(tmp_path)
    assert env.value.code == "store-url-scheme" and "LEGAL_JUDGE_STORE" in str(env.value)
    assert "s3cret" not in str(env.value)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="store-url-scheme|a store is a postgresql"):
        Store(url)
    assert not list(tmp_path.rglob("*:*"))  # no folder named after the scheme, no store


def test_malformed_toml_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = _project(tmp_path, '[store]\n\nurl = team.sqlite3\n')
    with pytest.raises(InputError, match="invalid TOML") as caught:
        store_setting(tmp_path)
    assert caught.value.problems[0].file == str(path)
    assert caught.value.problems[0].line == 3


def test_store_opens_the_project_file_s_store_and_writes_nothing_to_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_project(tmp_path / "project", '[store]\nurl = "shared.sqlite3"\n').parent)
    store = Store()
    try:
        assert store.path == tmp_path / "project" / "shared.sqlite3"
    finally:
        store.close()
    assert (tmp_path / "project" / "shared.sqlite3").is_file()
    assert not (tmp_path / "lj-home" / "store.sqlite3").exists()


def test_the_project_file_s_postgresql_url_opens_the_server_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_schema_url: str) -> None:
    monkeypatch.chdir(_project(tmp_path, f'[store]\nurl = "{pg_schema_url}"\n').parent)
    store = Store()
    try:
        assert store.postgres is not None
        store.create_run("r1", kind="run", config={}, items=[])
    finally:
        store.close()
    again = Store(pg_schema_url)
    try:
        assert again.run_exists("r1")
    finally:
        again.close()
    assert not (tmp_path / "lj-home" / "store.sqlite3").exists()


def test_a_store_that_cannot_be_opened_names_the_setting_that_chose_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A regular file where the store's folder should be: the store cannot be opened (as root too).
    (tmp_path / "blocked").write_text("not a folder", "utf-8")
    project = _project(tmp_path / "proj", f'[store]\nurl = "{tmp_path / "blocked" / "s.sqlite3"}"\n')
    monkeypatch.chdir(project.parent)
    with pytest.raises(StoreError) as raised:
        Store()
    assert raised.value.code == "store-cannot-open"
    assert f"{project} [store] url" in raised.value.fix
    assert "LEGAL_JUDGE_HOME" not in raised.value.fix
    # Through the variable, the fix names the variable.
    monkeypatch.setenv("LEGAL_JUDGE_STORE", str(tmp_path / "blocked" / "s.sqlite3"))
    with pytest.raises(StoreError) as raised:
        Store()
    assert "point LEGAL_JUDGE_STORE at one" in raised.value.fix
    # A store named by the caller is not blamed on a setting.
    monkeypatch.delenv("LEGAL_JUDGE_STORE")
    with pytest.raises(StoreError) as raised:
        Store(tmp_path / "blocked" / "other.sqlite3")
    assert "the command's store argument" in raised.value.fix
    assert "LEGAL_JUDGE_HOME" not in raised.value.fix
