"""The ablation script's table: mean +- sd over seeds and the paired test against the base fine-tune."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.eval.significance import fisher_randomization_test


@pytest.fixture(scope="module")
def ab():
    from experiments import dcl_ablation

    return dcl_ablation


def _seed_run(ndcg_pq: dict[str, float], mono: float) -> dict:
    pooled = {"metrics": {"ndcg@20": float(np.mean(list(ndcg_pq.values()))), "tlr@20": 0.5, "samelang@20": 0.2},
              "per_query": {"ndcg@20": ndcg_pq, "tlr@20": {q: 0.5 for q in ndcg_pq}, "samelang@20": {q: 0.2 for q in ndcg_pq}}}
    mono_bed = {"metrics": {"ndcg@20": mono}, "per_query": {"ndcg@20": {"m1": mono, "m2": mono}}}
    return {"pooled": pooled, "mono/de": mono_bed}


def test_table_mean_sd_and_paired_test_on_seed_means(ab):
    qs = [f"q{i}" for i in range(12)]
    rng = np.random.default_rng(0)
    base = {str(s): _seed_run({q: float(v) for q, v in zip(qs, rng.uniform(0.3, 0.6, 12))}, 0.5) for s in range(3)}
    full = {str(s): _seed_run({q: base[str(s)]["pooled"]["per_query"]["ndcg@20"][q] + 0.2 for q in qs}, 0.6 + 0.01 * s)
            for s in range(3)}
    table = ab.summarise({"base": base, "full": full}, ["de"])
    row = next(line for line in table.splitlines() if line.startswith("| full |"))
    means = [np.mean([full[s]["pooled"]["metrics"]["ndcg@20"] for s in full])]
    sd = np.std([full[s]["pooled"]["metrics"]["ndcg@20"] for s in full], ddof=1)
    assert f"{means[0]:.4f} ± {sd:.4f}" in row
    a = np.array([np.mean([full[s]["pooled"]["per_query"]["ndcg@20"][q] for s in full]) for q in qs])
    b = np.array([np.mean([base[s]["pooled"]["per_query"]["ndcg@20"][q] for s in base]) for q in qs])
    p = fisher_randomization_test(a, b, n_permutations=10000)
    assert p == 2 / 2 ** 12 and "(p<0.001)" in row  # 12 queries: exact, all better; never printed as 0
    assert "0.6100 ± 0.0100" in row  # mono mean over languages, mean +- sd over seeds
    base_row = next(line for line in table.splitlines() if line.startswith("| base |"))
    assert "(p=" not in base_row


def test_table3_variants_map_to_config_switches(ab):
    assert set(ab.TABLE3) == {"base", "disentangler", "hsa", "ldcl", "full"}
    assert ab.TABLE3["base"]["use_disentangler"] is False and ab.TABLE3["full"] == {}
    assert ab.TABLE3["hsa"] == {"use_ldcl": False} and ab.TABLE3["ldcl"]["use_hsa_sentence"] is False
    assert ab.TABLE3["disentangler"]["use_ldcl"] is False and "use_disentangler" not in ab.TABLE3["disentangler"]


def test_table_p_values_against_another_reference_row(ab):
    qs = [f"q{i}" for i in range(12)]
    rng = np.random.default_rng(1)
    base = {str(s): _seed_run({q: float(v) for q, v in zip(qs, rng.uniform(0.3, 0.6, 12))}, 0.5) for s in range(3)}
    dis = {s: _seed_run({q: v + 0.1 for q, v in r["pooled"]["per_query"]["ndcg@20"].items()}, 0.5) for s, r in base.items()}
    ldcl = {s: _seed_run(dict(r["pooled"]["per_query"]["ndcg@20"]), 0.5) for s, r in dis.items()}  # = dis
    table = ab.summarise({"base": base, "disentangler": dis, "ldcl": ldcl}, ["de"], reference="disentangler")
    first = table.split("\n\n")[0].splitlines()  # the pooled table (the monolingual one follows)
    rows = {line.split(" | ")[0][2:]: line for line in first if line.startswith("| ")}
    assert "(p=" not in rows["disentangler"].split(" | ")[2]  # the reference row has no p
    assert rows["ldcl"].split(" | ")[2].endswith("(p=1.000)")  # identical to the reference
    assert rows["base"].split(" | ")[2].endswith("(p<0.001)")  # 0.1 lower on every query
    assert ab.parse_args(["--work", "w", "--shared-ddtp", "f", "--reference", "hsa"]).reference == "hsa"
