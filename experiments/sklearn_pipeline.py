"""A user-style scikit-learn pipeline for `harden --model py:experiments.sklearn_pipeline:char_tfidf`:
character 2-5-gram TF-IDF within word boundaries and a logistic regression, fitted on demo:train."""

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from robustcount.data import load_demo


def char_tfidf():
    train = load_demo("train")
    return make_pipeline(TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=2, sublinear_tf=True),
                         LogisticRegression(C=4.0, max_iter=2000)).fit([e.input for e in train],
                                                                       [e.label for e in train])
