"""dist_train.Env (imported on first use: dataclasses is not cheap)."""
import dataclasses
import typing


@dataclasses.dataclass(frozen=True)
class Env:
    """What this process was started with (docs/env-contract.md); None where
    a variable is unset (deadline: also when the job has no time limit)."""
    rank: typing.Optional[int]
    world_size: typing.Optional[int]
    local_rank: typing.Optional[int]
    local_world_size: typing.Optional[int]
    node_rank: typing.Optional[int]
    master_addr: typing.Optional[str]
    master_port: typing.Optional[int]
    job_id: typing.Optional[int]
    restart_count: typing.Optional[int]
    deadline: typing.Optional[int]  # Unix seconds
