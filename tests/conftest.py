import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "rules"))   # the rule tables (test_forward, test_jacobians read them)
