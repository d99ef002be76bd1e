from __future__ import annotations

from tests.config.shlex_oracle import shlex_words
from tipc.config import bash


def test_ifs_split_matches_bash_rules() -> None:
    assert bash.ifs_split("", "|") == []
    assert bash.ifs_split("a|b", "|") == ["a", "b"]
    assert bash.ifs_split("a|", "|") == ["a"]
    assert bash.ifs_split("|a||b", "|") == ["", "a", "", "b"]


def test_common_value_is_field_one_of_an_every_colon_split() -> None:
    assert bash.common_value("pretrained_model_url:https://a.b/c.tar") == "https"
    assert bash.common_value("--opt:cpu:op.a=0|gpu:op.a=1") == "cpu"
    assert bash.common_value("runner.model_save_path") == ""
    assert bash.common_value("fpgm_export: ") == " "
    assert bash.common_key("  -o Global.epochs :x") == "  -o Global.epochs "


def test_first_colon_splitter_keeps_urls_and_whole_colonless_lines() -> None:
    assert bash.first_colon_value("weights:https://a.b/c.pdparams") == "https://a.b/c.pdparams"
    assert bash.first_colon_value("runner.model_save_path") == "runner.model_save_path"
    assert bash.first_colon_key("--opt:cpu:x") == "--opt"


def test_mode_value_selection() -> None:
    value = "lite_train_lite_infer=1|whole_train_whole_infer=50"
    assert bash.mode_value(value, "lite_train_lite_infer") == "1"
    assert bash.mode_value(value, "lite_train_whole_infer") == ""
    assert bash.mode_value("lite_train_lite_infer=a=b", "lite_train_lite_infer") == "a"
    assert bash.mode_value("2", "lite_train_lite_infer") == ""
    assert bash.mode_value(value, "") == ""
    assert bash.mode_value("=5|lite_train_lite_infer=1", "") == "5"  # `[[ "" = "" ]]` is true


def test_set_param_omits_null_blank_and_empty() -> None:
    assert bash.set_param("--epochs", "3") == "--epochs=3"
    assert bash.set_param("null", "3") == " "
    assert bash.set_param("--epochs", "null") == " "
    assert bash.set_param("--epochs", " ") == " "
    assert bash.set_param("--epochs", "") == " "


def test_word_tests_treat_empty_words_as_errors() -> None:
    assert not bash.test_eq("", "")
    assert not bash.test_ne("", "null")
    assert bash.test_ne(" null", "null")


def test_split_command_drops_redirections() -> None:
    argv, exact = bash.split_command("python a.py --x=1 > ./log/x.log 2>&1 ")
    assert argv == ["python", "a.py", "--x=1"] and exact
    argv, exact = bash.split_command("python a.py >./x.log")
    assert argv == ["python", "a.py"]
    argv, exact = bash.split_command("python a.py --s='unbalanced")
    assert not exact and argv[0] == "python"


def test_shell_words_match_shlex_on_random_strings() -> None:
    import random

    rng = random.Random(7)
    alphabet = "ab =\"'\\\t\n\r|>$*-#;&"
    for _ in range(20_000):
        command = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        assert bash.shell_words(command) == shlex_words(command), repr(command)


def test_shell_words_match_shlex_on_every_corpus_command() -> None:
    from tests.planning.test_corpus import CORPUS
    from tipc.planning.corpus import iter_cases
    from tipc.planning.planner import plan

    if CORPUS is None:
        import pytest

        pytest.skip("corpus not found: shared/tipc-corpus")
    commands = set()
    for case in iter_cases(CORPUS):
        for mode in case.expected:
            commands.update(case.expected[mode])
            commands.update(s.status_command for s in plan(case.config, mode, repo=case.repo).steps)
    assert len(commands) > 500
    for command in commands:
        assert bash.shell_words(command) == shlex_words(command), command


def test_shell_words_is_linear_on_long_words() -> None:
    import time

    command = "x" * 200_000 + " '" + "y z " * 50_000 + "' \"" + 'a\\"b ' * 40_000 + '"'
    start = time.process_time()
    words = bash.shell_words(command)
    assert time.process_time() - start < 0.5
    assert words is not None and len(words) == 3 and words[2].count('"') == 40_000
    assert bash.shell_words("a 'b") is None and bash.shell_words("a\\") is None
    assert bash.split_command("python a.py 'x") == (["python", "a.py", "'x"], False)
