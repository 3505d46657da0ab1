import Moments
import MomentsCSQLite
