import numpy as np
import pytest

from leaderboard.demo import images
from leaderboard.features.vai import FEATURES, VaiModel, fit_vai, image_features, visual_ai_index


def test_constant_image_features_by_hand():
    f = dict(zip(FEATURES, image_features(np.full((32, 32, 3), 100, np.uint8))))
    assert f["contrast"] == 0.0 and f["sharpness"] == 0.0
    assert f["smoothness"] == 1.0 and f["object_coherence"] == 0.0
    assert f["contextual_relevance"] == 0.0 and f["haralick_contrast"] == 0.0
    assert f["haralick_energy"] == pytest.approx(1.0)     # one GLCM cell holds everything
    assert f["freq_mean"] == pytest.approx(100.0)         # only the DC term: 100 * 32 * 32 / (32 * 32)
    # a single occupied HSV bin: std of (1, 0, ..., 0) over 512 bins
    assert f["color_consistency"] == pytest.approx(np.std(np.eye(1, 512)[0]))


def test_features_react_to_blur_and_noise():
    rng = np.random.default_rng(0)
    img = images.natural_image(rng, 64, 64)
    blurred = images.generator_look(img, rng, images.Look(blur=1.5))
    a, b = (dict(zip(FEATURES, image_features(x))) for x in (img, blurred))
    assert b["sharpness"] < a["sharpness"] and b["smoothness"] > a["smoothness"]
    assert b["texture_complexity"] < a["texture_complexity"]


def test_bad_images_are_rejected():
    with pytest.raises(ValueError, match="uint8"):
        image_features(np.zeros((8, 8, 3)))
    with pytest.raises(ValueError, match="3 x 3"):
        image_features(np.zeros((2, 8, 3), np.uint8))


def test_fit_separates_real_from_generated_per_subset():
    rng = np.random.default_rng(1)
    real = [images.natural_image(rng, 48, 48) for _ in range(20)]
    fake = [images.generator_look(images.natural_image(rng, 48, 48, noise=0.0), rng,
                                  images.Look(blur=1.0, grid=3.0)) for _ in range(20)]
    x = np.array([image_features(i) for i in real + fake])
    is_real = [True] * 20 + [False] * 20
    vai, models = visual_ai_index(features=np.vstack([x, x]), is_real=is_real * 2,
                                  subset=["A"] * 40 + ["B"] * 40)
    assert set(models) == {"A", "B"}
    assert vai[:20].mean() > 0.7 > 0.3 > vai[20:40].mean()
    np.testing.assert_allclose(vai[:40], vai[40:])
    model = VaiModel.from_dict(models["A"].as_dict())
    np.testing.assert_allclose(model.predict(x), vai[:40])


def test_fit_needs_both_classes():
    with pytest.raises(ValueError, match="real and generated"):
        fit_vai(features=np.zeros((3, len(FEATURES))), is_real=[True, True, True])
    with pytest.raises(ValueError, match="n x 12"):
        fit_vai(features=np.zeros((3, 5)), is_real=[True, False, True])
