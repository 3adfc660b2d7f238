"""Write ``pairs.jsonl``: a labelled sentence-pair set for the MiniLM example.

Every sentence below was written by hand for this example. The script only checks the lists, shuffles
the pairs with a fixed seed and numbers them, so reruns write a byte-identical file::

    python examples/minilm/data/make_pairs.py

Each line of the output is ``{"id": int, "sentence1": str, "sentence2": str, "label": 1 | 0}``:
1 = paraphrase (same meaning, different wording), 0 = unrelated or clearly different meaning.
The four groups are described in README.md next to this file.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "pairs.jsonl"
SEED = 8

Pair = tuple[str, str]

#: Paraphrases that share some of their wording.
PARAPHRASES: list[Pair] = [
    ("The meeting has been moved to Thursday afternoon.", "The meeting was rescheduled for Thursday afternoon."),
    (
        "She forgot her umbrella and got soaked on the way home.",
        "On her way home she got drenched because she had left her umbrella behind.",
    ),
    ("Water boils at 100 degrees Celsius at sea level.", "At sea level, the boiling point of water is 100 °C."),
    (
        "Preheat the oven to 180 degrees before you put the cake in.",
        "Heat the oven to 180 degrees first, then put in the cake.",
    ),
    ("The flight to Lisbon was delayed by two hours.", "Our Lisbon flight left two hours late."),
    (
        "He scored the winning goal in the last minute of the match.",
        "In the final minute of the game, he scored the goal that won it.",
    ),
    ("I need to renew my passport before the trip.", "My passport has to be renewed before I travel."),
    ("The company announced record profits this quarter.", "This quarter the firm reported its highest profits ever."),
    (
        "Plants convert sunlight into chemical energy through photosynthesis.",
        "Through photosynthesis, plants turn the energy of sunlight into chemical energy.",
    ),
    (
        "The museum is free to visit on the first Sunday of every month.",
        "On the first Sunday of each month, entry to the museum costs nothing.",
    ),
    (
        "Please turn off the lights when you leave the room.",
        "Switch the lights off when you go out of the room, please.",
    ),
    ("The recipe calls for two cups of flour and one egg.", "You need two cups of flour and an egg for this recipe."),
    ("Our team lost the final by a single point.", "We were beaten in the final by just one point."),
    (
        "The new phone has a much better camera than the old one.",
        "The camera on the new phone is far better than on the previous model.",
    ),
    ("The library closes at eight on weekdays.", "On weekdays the library shuts at 8 pm."),
    ("He has been working from home since March.", "Since March he has worked remotely from his house."),
    (
        "The doctor told him to drink more water and rest.",
        "He was advised by the doctor to rest and drink more fluids.",
    ),
    ("It is going to rain heavily tomorrow morning.", "Heavy rain is expected tomorrow morning."),
    ("The train was packed with commuters.", "The train was crowded with people going to work."),
    ("She learned to play the violin when she was six.", "She started learning the violin at the age of six."),
    ("The bridge was closed for repairs all summer.", "All summer long the bridge stayed shut for repair work."),
    ("Cut the onions into thin slices.", "Slice the onions thinly."),
    ("The hotel room had a beautiful view of the sea.", "From the hotel room there was a lovely sea view."),
    ("The price of petrol went up again this week.", "Fuel prices rose once more this week."),
    ("The children built a sandcastle on the beach.", "On the beach, the kids made a castle out of sand."),
    ("Light travels faster than sound.", "Sound moves more slowly than light."),
    ("The report must be submitted by Friday.", "The deadline for handing in the report is Friday."),
    ("He apologized for being late to the interview.", "He said sorry for arriving late to his interview."),
    ("The marathon starts at seven in the morning.", "The marathon begins at 7 am."),
    (
        "My laptop battery only lasts about two hours now.",
        "These days my laptop's battery runs out after roughly two hours.",
    ),
    ("The city plans to build a new park near the river.", "A new park by the river is planned by the city."),
    ("Add a pinch of salt to the boiling water.", "Put a little salt into the water once it boils."),
    ("The bus was cancelled because of the snow.", "Snow caused the bus to be cancelled."),
    (
        "She won the chess tournament without losing a single game.",
        "She took first place in the chess tournament and didn't lose one game.",
    ),
    ("The Earth orbits the Sun once a year.", "It takes the Earth one year to go around the Sun."),
    ("I'm allergic to peanuts.", "Peanuts give me an allergic reaction."),
    ("The software update fixed the login problem.", "The login issue was resolved by the software update."),
    (
        "We stayed at a small guesthouse in the mountains.",
        "Our accommodation was a little guesthouse up in the mountains.",
    ),
    ("The store is offering a twenty percent discount on all shoes.", "All shoes in the shop are 20% off."),
    (
        "He runs five kilometres every morning before breakfast.",
        "Each morning, before eating breakfast, he goes for a 5 km run.",
    ),
    (
        "The teacher asked the students to read the first chapter.",
        "The students were told by the teacher to read chapter one.",
    ),
    (
        "The vaccine reduces the risk of severe illness.",
        "Getting the vaccine lowers the chance of becoming seriously ill.",
    ),
    ("The restaurant was too noisy to have a conversation.", "It was so loud in the restaurant that we couldn't talk."),
    ("She moved to Canada to study engineering.", "She went to Canada to get an engineering degree."),
    ("The concert was sold out within minutes.", "Tickets for the concert sold out in a few minutes."),
    ("Let the dough rest for an hour before baking.", "Before baking, leave the dough to rest for one hour."),
    ("The referee showed him a red card for the foul.", "He was sent off with a red card after the foul."),
    ("Our neighbours are very friendly.", "The people who live next door to us are really nice."),
    ("The car wouldn't start this morning.", "This morning the car refused to start."),
    ("Most of the Earth's surface is covered by oceans.", "Oceans cover the majority of the planet's surface."),
    ("I'll call you as soon as I arrive.", "I'll phone you the moment I get there."),
    (
        "The museum's new exhibition focuses on ancient Egypt.",
        "The new exhibition at the museum is about ancient Egypt.",
    ),
    ("He was promoted to senior manager last month.", "Last month he got a promotion to senior manager."),
    ("The soup needs a bit more pepper.", "The soup could use a little more pepper."),
    ("They cancelled the picnic because of the storm.", "The storm made them call off the picnic."),
    ("The printer on the second floor is out of paper.", "There is no paper left in the second-floor printer."),
    ("Regular exercise improves sleep quality.", "Working out regularly helps you sleep better."),
    ("The baby finally fell asleep after midnight.", "It was past midnight when the baby at last went to sleep."),
    ("The tennis match lasted more than four hours.", "The tennis match went on for over four hours."),
    ("We need to buy milk, bread and eggs.", "We have to get eggs, bread and milk."),
    ("The hikers reached the summit just before sunset.", "Just before the sun went down, the hikers got to the top."),
    ("The instructions were hard to understand.", "The instructions were difficult to follow."),
    (
        "Her novel has been translated into twelve languages.",
        "Her book is available in translations into 12 languages.",
    ),
    (
        "The airport is about forty minutes from the city centre by taxi.",
        "A taxi from the city centre to the airport takes around forty minutes.",
    ),
    (
        "The company is hiring two new software developers.",
        "The firm is looking to recruit two more software engineers.",
    ),
    ("Dolphins are mammals, not fish.", "Dolphins are not fish; they are mammals."),
    ("The kettle is broken, so I can't make tea.", "I can't make any tea because the kettle doesn't work."),
    ("The game was postponed due to heavy rain.", "Heavy rain forced the game to be postponed."),
    (
        "She always takes the stairs instead of the lift.",
        "She never uses the elevator; she always walks up the stairs.",
    ),
    ("The volcano erupted for the first time in a century.", "The volcano had its first eruption in a hundred years."),
    ("My sister is two years older than me.", "I am two years younger than my sister."),
    ("The shop opens at nine and closes at six.", "The store's hours are from 9 am to 6 pm."),
    ("The movie was much longer than I expected.", "The film went on far longer than I had thought it would."),
    ("Wash your hands before you eat.", "Before eating, clean your hands."),
    (
        "The river flooded the village after days of rain.",
        "After several days of rain, the river overflowed and flooded the village.",
    ),
    ("He forgot his password and had to reset it.", "He had to reset his password because he couldn't remember it."),
    ("The team celebrated their victory in the locker room.", "In the locker room, the players celebrated their win."),
    ("Tomatoes grow best in warm, sunny weather.", "Warm, sunny conditions are best for growing tomatoes."),
    ("The conference will be held online this year.", "This year the conference is taking place virtually."),
    ("I've never been to Japan.", "I have not visited Japan before."),
    (
        "The patient's temperature returned to normal overnight.",
        "Overnight, the patient's fever went down to a normal level.",
    ),
    ("The old factory was turned into apartments.", "The former factory was converted into flats."),
    ("Please send me the file by email.", "Could you email me the file?"),
    ("The cyclists rode through the rain for hours.", "For hours the cyclists kept riding in the rain."),
    ("Bees play an important role in pollinating crops.", "Crops depend heavily on bees for pollination."),
    ("The waiter brought us the wrong order.", "We were served the wrong dishes by the waiter."),
    ("The coach was fired after a string of defeats.", "After losing several games in a row, the coach was dismissed."),
    ("The ferry crosses the lake every hour.", "There is a ferry across the lake once an hour."),
    ("He is saving money to buy a house.", "He's putting money aside so he can buy a home."),
    ("The internet connection keeps dropping.", "The internet keeps cutting out."),
    ("Gold is a good conductor of electricity.", "Electricity flows easily through gold."),
    ("We got lost because the map was out of date.", "The map was old, so we lost our way."),
    ("She finished the crossword in ten minutes.", "It took her ten minutes to complete the crossword."),
    ("Stir the sauce constantly so it doesn't burn.", "Keep stirring the sauce to stop it from burning."),
    (
        "The parcel should arrive within three working days.",
        "Delivery of the parcel is expected in three business days.",
    ),
    ("The goalkeeper saved a penalty in the second half.", "In the second half, the keeper stopped a penalty kick."),
    ("The town is famous for its cheese.", "The town is well known for the cheese it produces."),
    (
        "The lecture was cancelled because the professor was ill.",
        "The professor was sick, so the lecture did not take place.",
    ),
    ("I usually go to bed around eleven.", "I normally go to sleep at about 11 pm."),
    ("The printer jammed halfway through the document.", "Halfway through printing the document, the paper got stuck."),
    ("The spacecraft landed safely on Mars.", "The probe made a safe landing on Mars."),
    ("The castle was built in the twelfth century.", "The castle dates from the 1100s."),
    ("He took the dog for a walk in the park.", "He walked the dog in the park."),
    ("Our rent is going up next year.", "Next year we will have to pay more rent."),
    ("The bakery sells fresh bread every morning.", "Every morning the bakery has freshly baked bread for sale."),
    ("The children were asleep by nine o'clock.", "By nine, the kids had all gone to sleep."),
    ("The museum guide spoke three languages fluently.", "Our guide at the museum was fluent in three languages."),
    (
        "The new bike lane makes cycling to school safer.",
        "Riding a bike to school is safer thanks to the new cycle lane.",
    ),
    ("Thunderstorms are likely later this afternoon.", "There will probably be thunderstorms this afternoon."),
    ("The apartment is close to the metro station.", "The flat is just a short walk from the underground station."),
    ("He fixed the leaking tap in the bathroom.", "He repaired the dripping bathroom tap."),
    ("The final exam counts for half of the grade.", "Half of the mark comes from the final exam."),
    ("Brush the bread with olive oil before toasting it.", "Before you toast the bread, brush some olive oil on it."),
    (
        "Sharks have existed for over 400 million years.",
        "Sharks have been around for more than four hundred million years.",
    ),
    ("The hotel staff were extremely helpful.", "The people working at the hotel were very helpful."),
]

#: Paraphrases with little or no shared wording (idioms, synonyms, a sentence and its plain meaning).
HARD_PARAPHRASES: list[Pair] = [
    ("He kicked the bucket last winter.", "He died last winter."),
    ("I'm starving.", "I really need something to eat."),
    ("It's raining cats and dogs.", "There is a downpour outside."),
    ("She passed away peacefully in her sleep.", "She died quietly during the night."),
    ("The firm let go of half its staff.", "The company laid off fifty percent of its employees."),
    ("Can you give me a hand?", "Would you help me?"),
    ("He's under the weather today.", "He feels ill today."),
    ("The vehicle came to a halt.", "The car stopped."),
    ("Break a leg tonight!", "Good luck with your performance this evening!"),
    ("I'm on cloud nine.", "I feel extremely happy."),
    ("The youngsters were thrilled.", "The kids were very excited."),
    ("It costs an arm and a leg.", "It is extremely expensive."),
    ("We hit the road at dawn.", "We set off on our journey early in the morning."),
    ("She returned the purchase for a full refund.", "She took back what she had bought and got all her money back."),
    ("Let's call it a day.", "We should stop working now."),
    ("The audience gave a standing ovation.", "Everyone in the theatre rose and applauded."),
    ("She aced the exam.", "She got a perfect score on the test."),
    ("Physicians recommend a balanced diet.", "Doctors advise eating a variety of healthy foods."),
    ("I'm going to hit the sack.", "I'm going to bed."),
    ("That exam was a piece of cake.", "The test was very easy."),
    ("The shop is shutting down for good.", "The store is closing permanently."),
    ("He lost his temper.", "He became very angry."),
    ("The infant is teething.", "The baby's first teeth are coming through."),
    ("We're out of milk.", "There's no milk left."),
    ("He spilled the beans about the surprise party.", "He accidentally revealed the secret of the party."),
    ("The deal fell through.", "The agreement was never completed."),
    ("I can't make head or tail of this.", "I don't understand this at all."),
    ("The novel is a page-turner.", "The book is so gripping you can't put it down."),
    ("She was over the moon about the news.", "The news made her incredibly happy."),
    ("Keep an eye on the pot.", "Watch the saucepan."),
    ("He's a night owl.", "He likes to stay up very late."),
    ("The flight was overbooked.", "The airline sold more tickets than there were seats."),
    ("Global temperatures are rising.", "The planet is getting warmer."),
    ("The cheque bounced.", "The bank refused to pay because there wasn't enough money in the account."),
    ("I'm feeling blue.", "I'm sad."),
]

#: Different meanings with most of the wording shared: swapped roles, negation, antonyms, other values.
HARD_NEGATIVES: list[Pair] = [
    ("The cat chased the dog.", "The dog chased the cat."),
    ("The company bought the startup.", "The startup bought the company."),
    ("The teacher praised the student.", "The student praised the teacher."),
    ("Italy beat Spain in the semi-final.", "Spain beat Italy in the semi-final."),
    ("She moved from London to Paris.", "She moved from Paris to London."),
    ("The store is open on Sundays.", "The store is closed on Sundays."),
    ("She is allergic to cats.", "She is not allergic to cats."),
    ("The hotel allows pets.", "The hotel does not allow pets."),
    ("He always drinks coffee in the morning.", "He never drinks coffee in the morning."),
    ("The train leaves at nine in the morning.", "The train leaves at nine in the evening."),
    ("He passed the driving test on his first try.", "He failed the driving test on his first try."),
    ("The price of oil rose sharply.", "The price of oil fell sharply."),
    ("The patient's condition improved overnight.", "The patient's condition worsened overnight."),
    ("The experiment confirmed the hypothesis.", "The experiment disproved the hypothesis."),
    ("The plane landed in heavy fog.", "The plane took off in heavy fog."),
]

#: Same topic, different statement.
TOPIC_NEGATIVES: list[Pair] = [
    ("The flight to Madrid was delayed.", "I prefer window seats on long flights."),
    ("Knead the dough for ten minutes.", "This bread recipe uses no yeast at all."),
    ("The striker was injured in training.", "Ticket prices for the stadium have doubled."),
    ("My laptop screen is cracked.", "I installed a new word processor yesterday."),
    ("The hotel breakfast starts at seven.", "The hotel pool is closed for cleaning."),
    ("The doctor is on holiday this week.", "Regular check-ups can catch diseases early."),
    ("Jupiter is the largest planet in the solar system.", "The telescope was built in the nineteenth century."),
    ("Our office is moving to a new building.", "The printer needs a new ink cartridge."),
    ("She plays the piano every evening.", "The orchestra is touring Asia next spring."),
    ("The beach was crowded all weekend.", "Sunscreen should be reapplied every two hours."),
    ("The museum bought a painting by Monet.", "Photography is not allowed in the gallery."),
    ("Our train was stuck in a tunnel.", "The new station has a big bicycle parking area."),
    ("The recipe needs fresh basil.", "Our oven takes ages to heat up."),
    ("The team hired a new goalkeeper.", "The stadium roof leaks when it rains."),
    ("The exam has three sections.", "The school canteen serves pasta on Fridays."),
    ("The bank raised interest rates.", "Many people pay for their groceries by card now."),
    ("The volcano is being closely monitored.", "Earthquakes are common along this coast."),
    ("He broke his arm skiing.", "The ski resort opens in December."),
    ("The coffee machine in the kitchen is broken.", "The company is planning a summer party."),
    ("Tigers are an endangered species.", "The zoo is open every day except Christmas."),
    ("The city council approved a new budget.", "Voters will elect a new mayor next year."),
    ("Our garden is full of weeds.", "The neighbours planted an apple tree."),
    ("The smartphone's battery overheats.", "The store sells phone cases in many colours."),
    ("The mountain road is closed in winter.", "Hikers should carry enough water."),
    ("The cake needs to cool before you ice it.", "Chocolate chip cookies are my favourite dessert."),
    ("The runner twisted her ankle.", "The race course goes along the river."),
    ("The new law bans smoking in parks.", "The parks department is planting more trees."),
    ("I missed the last bus home.", "Bus drivers are on strike for better pay."),
    ("The scientist published her results in a journal.", "The lab needs new microscopes."),
    ("Our holiday cottage has no internet.", "The village shop sells local honey."),
    ("He is learning to speak Spanish.", "Spanish omelettes are made with potatoes."),
    ("The baby has a slight fever.", "The nursery needs a new coat of paint."),
    ("The airline lost my suitcase.", "The airport has free Wi-Fi."),
    ("Rain is forecast for the weekend.", "Last summer was the hottest on record."),
    ("The quarterly report shows falling sales.", "Our manager is retiring next month."),
    ("The bridge is painted bright red.", "Traffic on the motorway was light this morning."),
    ("The cat sleeps on the sofa all day.", "Dogs need to be walked several times a day."),
    ("The violinist broke a string during the concert.", "The concert hall was built in 1920."),
    ("He grilled the fish on the barbecue.", "The supermarket ran out of charcoal."),
    ("The students protested against higher fees.", "The university library has a new reading room."),
    ("The wind turbine produces electricity.", "Solar panels are becoming cheaper every year."),
    ("She is training for a triathlon.", "The swimming pool is heated in winter."),
    ("The restaurant got a bad review.", "The chef trained in France for five years."),
    ("Our cruise ship stopped at three islands.", "Seasickness can be treated with ginger."),
    ("The roof needs to be repaired before winter.", "The house has four bedrooms and a garage."),
    ("The app crashes when I open the camera.", "Video calls use a lot of mobile data."),
    ("The Moon has no atmosphere.", "Astronauts train for years before a mission."),
    ("The jury found the defendant not guilty.", "The courthouse is in the old town square."),
    ("The tomatoes are not ripe yet.", "The farmers' market is held on Saturdays."),
    ("The goalkeeper signed a three-year contract.", "The fans sang throughout the match."),
    ("The ski lift stopped working in the wind.", "Beginners should take a lesson before skiing."),
    ("Our flight was diverted to another airport.", "Airline food has improved in recent years."),
    ("The lasagne needs to bake for forty minutes.", "Garlic bread goes well with pasta."),
    ("The striker has scored twenty goals this season.", "The club is building a new training ground."),
    ("The hospital is short of nurses.", "Flu cases usually rise in winter."),
    ("The email server was down all morning.", "The IT team will replace everyone's laptops next year."),
    ("Neutron stars are incredibly dense.", "The observatory is open to the public on Fridays."),
    ("The hotel is next to the cathedral.", "The city's old town is a UNESCO World Heritage Site."),
    ("The company cut its marketing budget.", "Two new board members were appointed."),
    ("Our daughter starts school in September.", "The school uniform is navy blue."),
]

#: Unrelated topics.
UNRELATED: list[Pair] = [
    ("I left my keys on the kitchen table.", "The Amazon is the largest rainforest on Earth."),
    ("The orchestra played Beethoven's fifth symphony.", "Remember to water the plants while I'm away."),
    ("The stock market closed lower today.", "My grandmother knits scarves for the whole family."),
    ("Penguins live mostly in the Southern Hemisphere.", "The new tax rules start in April."),
    ("She painted the fence white.", "The football season ends in May."),
    ("The recipe serves four people.", "The satellite was launched from French Guiana."),
    ("I'm reading a book about the French Revolution.", "The dentist appointment is at half past three."),
    ("The train station has a new cafe.", "Electrons carry a negative charge."),
    ("He collects old stamps.", "The highway will be widened next year."),
    ("Lemons are rich in vitamin C.", "The company moved its headquarters to Berlin."),
    ("We watched a documentary about whales.", "The password must contain at least eight characters."),
    ("The hiking trail is steep and rocky.", "Interest on the loan is paid monthly."),
    ("Our cat knocked a glass off the shelf.", "The parliament passed the budget last night."),
    ("The marathon runner crossed the finish line.", "Fresh mint makes a nice tea."),
    ("The printer is out of toner.", "The glacier has shrunk dramatically."),
    ("My brother is afraid of spiders.", "The bakery opens at six in the morning."),
    ("The wedding will take place in June.", "Copper turns green when it oxidizes."),
    ("The laptop comes with a one-year warranty.", "Wolves hunt in packs."),
    ("The children are playing in the garden.", "The central bank kept interest rates unchanged."),
    ("She is writing her thesis on medieval poetry.", "Don't forget to bring sunscreen to the beach."),
    ("The bus stop is across the street.", "Mars has two small moons."),
    ("The pasta needs another five minutes.", "The election results will be announced tonight."),
    ("He repaired the bicycle's flat tyre.", "The painting was stolen from the museum in 1990."),
    ("Our flight lands at midnight.", "Spinach contains a lot of iron."),
    ("The basketball game went into overtime.", "I need to renew my library card."),
    ("The river is frozen in January.", "The startup raised ten million dollars."),
    ("I bought a new pair of running shoes.", "The ancient city was buried by volcanic ash."),
    ("The meeting notes are on the shared drive.", "Owls hunt mostly at night."),
    ("The tea is too hot to drink.", "The tennis club is looking for new members."),
    ("My phone fell into the swimming pool.", "The treaty was signed in 1648."),
    ("The garden centre sells rose bushes.", "The software engineer fixed the memory leak."),
    ("Snow fell on the mountains overnight.", "The restaurant only accepts cash."),
    ("The professor wrote three books on economics.", "Our dog loves chasing tennis balls."),
    ("I take the subway to work.", "Honey never spoils if it is stored properly."),
    ("The festival attracts thousands of visitors.", "Check the oil level in the car regularly."),
    ("She ordered a vegetable curry.", "The telescope can see distant galaxies."),
    ("The sofa is too big for the living room.", "The cyclist won the mountain stage."),
    ("Vaccines are stored at low temperatures.", "The band released its first album in 2005."),
    ("The kids made pancakes for breakfast.", "The bridge was designed by a famous architect."),
    ("The contract expires at the end of the year.", "Koalas sleep for most of the day."),
    ("The storm knocked down several trees.", "I prefer green tea to black tea."),
    ("The museum has a large collection of fossils.", "The phone bill was higher than usual."),
    ("They are renovating the kitchen.", "The Pacific is the deepest ocean."),
    ("The chess club meets on Tuesdays.", "Bread rises because of the yeast."),
    ("The ferry was cancelled due to high waves.", "My cousin is studying medicine."),
    ("The city has excellent public transport.", "The goalkeeper dived to the left."),
    ("The candle burned for three hours.", "The airline introduced a new baggage policy."),
    ("Our landlord fixed the heating.", "Diamonds are made of carbon."),
    ("The hospital opened a new children's ward.", "The comedian told jokes about airports."),
    ("I can't find my reading glasses.", "The rainy season starts in October."),
    ("The programmer wrote the code in Python.", "Sunflowers turn towards the sun."),
    ("The parade goes through the main street.", "The battery in the smoke alarm needs replacing."),
    ("He grows tomatoes on his balcony.", "The investor sold all her shares."),
    ("The swimming lesson was cancelled.", "The novel is set in nineteenth-century Russia."),
    ("The volcano last erupted in 1980.", "I'd like a table for two, please."),
    ("The headphones cancel background noise.", "The farmer sold his sheep at the market."),
    ("Our neighbour plays the drums at night.", "The map shows all the hiking trails in the park."),
    ("The elevator is out of order.", "Rice is the staple food in many countries."),
    ("The lighthouse guided ships into the harbour.", "I have a job interview tomorrow."),
    ("The jacket is waterproof.", "The queen opened the new hospital."),
    ("The pharmacy is open until ten.", "Saturn's rings are made of ice and rock."),
    ("She taught herself to juggle.", "The mortgage rate was fixed for five years."),
    ("The apples in the orchard are ready to pick.", "The network was down for an hour."),
    ("The film won three awards.", "Use a sharp knife to cut the bread."),
    ("The tourist asked for directions to the station.", "Photosynthesis happens in the leaves."),
    ("The kite got stuck in a tree.", "The bank charges a fee for international transfers."),
    ("My uncle repairs old clocks.", "The marathon route passes the harbour."),
    ("The laundry is still wet.", "Chess was invented in India."),
    ("The puppy chewed my slippers.", "Inflation slowed in the third quarter."),
    ("We ran out of coffee filters.", "The castle has a ghost story."),
    ("The road to the airport is being resurfaced.", "Octopuses have three hearts."),
    ("She bought tickets for the opera.", "The well water tastes of iron."),
    ("The plumber is coming on Tuesday.", "The pyramids were built as tombs."),
    ("The school choir won a national prize.", "Leave the car keys at reception."),
    ("Giraffes sleep only a few hours a day.", "The bill includes a service charge."),
]

#: (group name, label, pairs), in the order README.md lists them.
GROUPS: list[tuple[str, int, list[Pair]]] = [
    ("paraphrase", 1, PARAPHRASES),
    ("hard paraphrase", 1, HARD_PARAPHRASES),
    ("hard negative", 0, HARD_NEGATIVES),
    ("same-topic negative", 0, TOPIC_NEGATIVES),
    ("unrelated", 0, UNRELATED),
]


def build_rows(seed: int = SEED) -> list[dict[str, object]]:
    """All pairs, checked, shuffled with ``seed`` and numbered from 0."""
    rows: list[tuple[str, str, int]] = []
    seen: dict[str, str] = {}
    for group, label, pairs in GROUPS:
        for first, second in pairs:
            if first == second:
                raise ValueError(f"{group}: a pair repeats one sentence: {first!r}")
            for sentence in (first, second):
                if sentence in seen:
                    raise ValueError(f"{group}: {sentence!r} is already used in the {seen[sentence]} group")
                seen[sentence] = group
            rows.append((first, second, label))
    random.Random(seed).shuffle(rows)
    return [{"id": i, "sentence1": a, "sentence2": b, "label": label} for i, (a, b, label) in enumerate(rows)]


def main() -> None:
    rows = build_rows()
    with OUTPUT.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    for group, label, pairs in GROUPS:
        print(f"{group:>20}: {len(pairs):3d} pairs, label {label}")
    positives = sum(int(row["label"]) for row in rows)
    print(f"wrote {OUTPUT} ({len(rows)} pairs: {positives} paraphrases, {len(rows) - positives} negatives)")


if __name__ == "__main__":
    main()
