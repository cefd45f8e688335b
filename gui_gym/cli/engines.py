"""Commands for the engines users already run: ``serve-openenv`` (any env behind an OpenEnv
server, for TRL, verifiers, SkyRL and OpenEnv's own clients)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gui_gym.cli._common import (
    EmbedderOption,
    MissingDependency,
    OrmModelOption,
    ProgressModelOption,
    UsageError,
    app,
    check_env_id,
    check_reward_model_folders,
    choose,
    existing_file,
    open_env,
    parse_kwargs,
)


def _positive(value: float | None, what: str) -> float | None:
    if value is not None and not value > 0:
        raise UsageError(f"{what} must be > 0 seconds, got {value:g}")
    return value


@app.command("serve-openenv")
def serve_openenv(
    env_id: Annotated[str, typer.Argument(help="env id to serve, e.g. GuiGym/WikiHow-v0")],
    port: Annotated[int, typer.Option(help="port (0 picks a free one)", min=0, max=65535)] = 8000,
    host: Annotated[
        str, typer.Option(help="address to bind (127.0.0.1: this machine only)")
    ] = "127.0.0.1",
    max_sessions: Annotated[
        int, typer.Option(help="sessions at once (each one env worker process)", min=1)
    ] = 8,
    session_timeout: Annotated[
        float,
        typer.Option(
            help="seconds a client may send nothing before its session is closed and its "
            "slot reclaimed"
        ),
    ] = 300.0,
    step_timeout: Annotated[
        float,
        typer.Option(help="seconds a reset or step may take before its env worker is killed"),
    ] = 600.0,
    reward: Annotated[
        str,
        typer.Option(help="reward stack, as gui-gym train: e.g. outcome+progress, outcome+prm"),
    ] = "outcome",
    env_arg: Annotated[
        list[str] | None,
        typer.Option("--env-arg", help="gym.make key=value (split, max_steps, screenshot=true)"),
    ] = None,
    prm_model: Annotated[
        Path | None, typer.Option(help="gui-gym train-prm folder (prm reward)")
    ] = None,
    progress_model: ProgressModelOption = None,
    orm_model: OrmModelOption = None,
    embedder: EmbedderOption = "minilm",
    progress_k: Annotated[
        int, typer.Option(min=1, help="history length k of the progress reward (ProgRM Eq. 2)")
    ] = 1,
    milestone_store: Annotated[
        Path | None, typer.Option(help="milestone store JSON the milestone reward reads")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="log errors only")] = False,
    token: Annotated[
        str | None,
        typer.Option(
            help="secret every request must carry (Authorization: Bearer TOKEN, or ?token=TOKEN "
            "on the WebSocket URL); required with a --host other than loopback; also read "
            "from GUI_GYM_TOKEN",
            envvar="GUI_GYM_TOKEN",
        ),
    ] = None,
) -> None:
    """Serve ENV_ID over OpenEnv (WebSocket sessions at /ws): each session one env in its own
    worker process, with the reward stack of --reward; Ctrl+C stops it."""
    import gymnasium as gym

    from gui_gym.integrations.server_guard import check_bind
    from gui_gym.train.reward_stack import RewardStack, parse_reward

    try:
        check_bind(host, token)
    except ValueError as err:
        raise UsageError(str(err)) from None
    check_env_id(env_id)
    _positive(session_timeout, "--session-timeout")
    _positive(step_timeout, "--step-timeout")
    choose(embedder, ("minilm", "hashing"), "--embedder")
    check_reward_model_folders(prm_model, progress_model, orm_model)
    if milestone_store is not None:
        existing_file(milestone_store, "--milestone-store")
    reward_options = {
        "embedder": embedder,
        "progress_k": progress_k,
        **({"prm_model": str(prm_model)} if prm_model is not None else {}),
        **({"progress_model": str(progress_model)} if progress_model is not None else {}),
        **({"orm_model": str(orm_model)} if orm_model is not None else {}),
        **({"milestone_store": str(milestone_store)} if milestone_store is not None else {}),
    }
    try:
        RewardStack(parse_reward(reward), **reward_options)
    except ValueError as err:
        raise UsageError(f"--reward {reward}: {err}") from None
    env_kwargs = parse_kwargs(env_arg)
    open_env(env_id, **env_kwargs).close()  # a bad env argument is one line, before serving

    from gui_gym.integrations.openenv import bind_socket

    try:
        sock = bind_socket(host, port)
    except (OSError, UnicodeError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        raise UsageError(f"cannot listen on {host}:{port}: {reason}") from None
    try:
        from gui_gym.integrations.openenv import ServedEnv, serve
    except gym.error.DependencyNotInstalled as err:
        sock.close()
        raise MissingDependency(str(err)) from None
    served = ServedEnv(
        env_id,
        env_kwargs=env_kwargs,
        reward=reward,
        reward_options=reward_options,
        step_timeout=step_timeout,
    )
    bound_port = sock.getsockname()[1]
    if token:
        typer.echo("requests must carry the --token (Authorization: Bearer TOKEN)", err=True)

    def announce() -> None:
        typer.echo(
            f"serving {env_id} (reward {reward}) over OpenEnv at http://{host}:{bound_port} "
            f"(WebSocket ws://{host}:{bound_port}/ws; {max_sessions} sessions, session "
            f"timeout {session_timeout:g} s; Ctrl+C to stop)",
            err=True,
        )

    try:
        serve(
            served,
            sock,
            max_sessions=max_sessions,
            session_timeout=session_timeout,
            log_level="error" if quiet else "warning",
            on_ready=announce,
            token=token,
        )
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
